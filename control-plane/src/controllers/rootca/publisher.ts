/**
 * The root CA publisher (kube-controller-manager's root-ca-cert-publisher): every active
 * namespace holds a ConfigMap `kube-root-ca.crt` with the cluster CA as `ca.crt`, which the
 * service-account projected volume mounts into pods; re-created when deleted, corrected when
 * edited.
 */
import { CONFIGMAPS, NAMESPACES, type ApiClient, type ConfigMap } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type SharedInformers } from '../runtime.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface RootCaPublisherDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
  options: { rootCaPem?: string };
}

export class RootCaPublisher implements Controller {
  readonly name = 'root-ca-cert-publisher';
  readonly queue;
  readonly workers = 1;
  readonly #d: RootCaPublisherDeps;
  readonly #namespaces;
  readonly #configMaps;

  constructor(d: RootCaPublisherDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#namespaces = d.informers.for(NAMESPACES);
    this.#configMaps = d.informers.for(CONFIGMAPS);
    this.#namespaces.on({ onAdd: (n) => this.queue.add(n.metadata.name!), onUpdate: (_o, n) => this.queue.add(n.metadata.name!) });
    const byConfigMap = (cm: ConfigMap): void => {
      if (cm.metadata.name === ROOT_CA_CONFIGMAP && cm.metadata.namespace) this.queue.add(cm.metadata.namespace);
    };
    this.#configMaps.on({ onUpdate: (_o, cm) => byConfigMap(cm), onDelete: byConfigMap });
  }

  async reconcile(ns: string, signal: AbortSignal): Promise<void> {
    const caPem = this.#d.options.rootCaPem;
    if (!caPem) return;
    const namespace = this.#namespaces.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return;
    const cur = this.#configMaps.get(`${ns}/${ROOT_CA_CONFIGMAP}`);
    const api = this.#d.client.resource(CONFIGMAPS, ns);
    try {
      if (!cur) {
        await api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace: ns, annotations: { 'kubernetes.io/description': DESCRIPTION } }, data: { 'ca.crt': caPem } }, { signal });
      } else if (cur.data?.['ca.crt'] !== caPem) {
        await api.update({ ...cur, data: { ...cur.data, 'ca.crt': caPem } }, { signal });
      }
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS') && !hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
}
