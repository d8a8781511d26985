/**
 * The root CA publisher (kube-controller-manager's root-ca-cert-publisher): every active
 * namespace holds a ConfigMap `kube-root-ca.crt` with the cluster CA as `ca.crt`, which the
 * service-account projected volume mounts into pods; re-created when deleted, corrected when
 * edited.
 */
import { CONFIGMAPS, NAMESPACES, type ConfigMap } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export class RootCaPublisher extends ControllerBase {
  readonly #namespaces;
  readonly #configMaps;

  constructor(d: ControllerDeps) {
    super(d, { name: 'root-ca-cert-publisher', workers: 1 });
    this.#namespaces = this.watch(NAMESPACES, (n) => n.metadata.name!, ['add', 'update']);
    this.#configMaps = this.watch(CONFIGMAPS, (cm: ConfigMap) => (cm.metadata.name === ROOT_CA_CONFIGMAP && cm.metadata.namespace ? cm.metadata.namespace : undefined), ['update', 'delete']);
  }

  async reconcile(ns: string, signal: AbortSignal): Promise<void> {
    const caPem = this.options.rootCaPem;
    if (!caPem) return;
    const namespace = this.#namespaces.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return;
    const cur = this.#configMaps.get(`${ns}/${ROOT_CA_CONFIGMAP}`);
    const api = this.client.resource(CONFIGMAPS, ns);
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
