/**
 * Endpoints and EndpointSlice controllers: for every Service with a selector, keep an Endpoints
 * object (same name) and EndpointSlices (`<service>-<5 chars>`, labelled
 * `kubernetes.io/service-name`, owned by the Service) listing the selected pods' IPs (./compute.ts).
 * A pod change re-syncs the Services in its namespace whose selector matches it (before or after).
 */
import { ENDPOINTS, ENDPOINTSLICES, PODS, SERVICES, type EndpointSlice, type Endpoints, type Informer, type InformerHandlers, type Pod, type Service } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { canonicalJson } from '../deployment/util.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf, newControllerRef, randomSuffix, splitKey } from '../util/pods.js';
import { MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, computeSlices, computeSubsets } from './compute.js';

function selects(svc: Service, pod: Pod | undefined): boolean {
  const sel = svc.spec?.selector;
  if (!pod || !sel || Object.keys(sel).length === 0 || svc.metadata.namespace !== pod.metadata.namespace) return false;
  return Object.entries(sel).every(([k, v]) => pod.metadata.labels?.[k] === v);
}

/** Pod events, as the keys of the services selecting the pod before or after the change (both controllers). */
function podEvents(services: Informer<Service>, add: (key: string) => void): InformerHandlers<Pod> {
  const onPod = (old: Pod | undefined, pod: Pod | undefined): void => {
    for (const svc of services.list()) if (selects(svc, old) || selects(svc, pod)) add(keyOf(svc));
  };
  return { onAdd: (p) => onPod(undefined, p), onUpdate: (o, p) => onPod(o, p), onDelete: (p) => onPod(p, undefined) };
}

export class EndpointsController extends ControllerBase {
  readonly #services;
  readonly #pods;
  readonly #endpoints;

  constructor(d: ControllerDeps) {
    super(d, { name: 'endpoints' });
    this.#services = this.watch(SERVICES);
    this.#pods = this.informer(PODS);
    this.#endpoints = this.informer(ENDPOINTS);
    this.handle(this.#pods, podEvents(this.#services, (k) => this.queue.add(k)));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const api = this.client.resource(ENDPOINTS, namespace);
    const svc = this.#services.get(key);
    const cur = this.#endpoints.get(key);
    if (!svc) {
      if (cur) await api.delete(name).catch((err) => { if (!hasCode(err, 'ERR_NOT_FOUND')) throw err; });
      return;
    }
    if (!svc.spec?.selector || Object.keys(svc.spec.selector).length === 0) return; // user-managed endpoints
    const subsets = computeSubsets(svc, this.#pods.list());
    const labels = { ...(svc.metadata.labels ?? {}) };
    if (cur && canonicalJson(cur.subsets ?? []) === canonicalJson(subsets) && canonicalJson(cur.metadata.labels ?? {}) === canonicalJson(labels)) return;
    const body: Endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets };
    if (cur) await api.update({ ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } }, { signal });
    else {
      try {
        await api.create(body, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
        throw new Error(`endpoints "${key}" exist but are not in the cache yet; retrying`, { cause: err });
      }
    }
  }
}

/**
 * When the first change not yet written for a Service was seen. Upstream derives it from pod and
 * Service timestamps; the time the controller saw the event is close enough for the proxy's
 * network-programming latency (it measures from here to its rules being live).
 */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

export class EndpointSliceController extends ControllerBase {
  readonly #services;
  readonly #pods;
  readonly #slices;
  /** Per service key: when the first change not yet synced came (the slices' last-change-trigger-time). */
  readonly #triggers = new Map<string, number>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'endpointslice' });
    this.#services = this.watch(SERVICES);
    this.#pods = this.informer(PODS);
    this.handle(this.#pods, podEvents(this.#services, (k) => this.enqueue(k)));
    const serviceOf = (sl: EndpointSlice): string | undefined => {
      const svc = sl.metadata.labels?.[SERVICE_NAME_LABEL];
      return svc && sl.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY ? `${sl.metadata.namespace}/${svc}` : undefined;
    };
    this.#slices = this.watch(ENDPOINTSLICES, serviceOf, ['delete']);
  }

  protected override enqueue(key: string): void {
    if (!this.#triggers.has(key)) this.#triggers.set(key, this.clock.now());
    super.enqueue(key);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const trigger = this.#triggers.get(key) ?? this.clock.now();
    this.#triggers.delete(key);
    try {
      await this.#reconcile(key, trigger, signal);
    } catch (err) {
      // Retried by the queue: keep the older trigger time.
      this.#triggers.set(key, Math.min(trigger, this.#triggers.get(key) ?? trigger));
      throw err;
    }
  }

  async #reconcile(key: string, trigger: number, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const svc = this.#services.get(key);
    // A deleted Service's slices go with it through the garbage collector (ownerReference).
    if (!svc?.spec?.selector || Object.keys(svc.spec.selector).length === 0) return;
    const api = this.client.resource(ENDPOINTSLICES, namespace);
    const existing = this.#slices
      .list()
      .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY)
      .sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    const desired = computeSlices(svc, this.#pods.list());
    if (desired.length === 0) desired.push({ ports: [], endpoints: [] }); // upstream keeps one (empty) slice per Service
    const labels = { ...(svc.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY };
    for (let i = 0; i < desired.length; i++) {
      const want = desired[i]!;
      const cur = existing[i];
      const body: EndpointSlice = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: cur?.metadata.name ?? `${name}-${randomSuffix(this.random)}`, namespace, labels, ownerReferences: [newControllerRef(svc, 'v1', 'Service')],
          annotations: { [LAST_CHANGE_TRIGGER_TIME]: new Date(trigger).toISOString() },
        },
        addressType: 'IPv4',
        endpoints: want.endpoints,
        ports: want.ports,
      };
      if (!cur) {
        await api.create({ ...body, metadata: { ...body.metadata, generateName: `${name}-` } }, { signal });
      } else if (canonicalJson([cur.endpoints ?? [], cur.ports ?? [], cur.metadata.labels ?? {}]) !== canonicalJson([body.endpoints, body.ports, labels])) {
        await api.update({ ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } }, { signal });
      }
    }
    for (const extra of existing.slice(desired.length)) {
      await api.delete(extra.metadata.name ?? '', { signal }).catch((err) => { if (!hasCode(err, 'ERR_NOT_FOUND')) throw err; });
    }
  }
}
