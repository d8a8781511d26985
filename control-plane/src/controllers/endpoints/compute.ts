/**
 * What the Endpoints and EndpointSlice controllers write for a Service with a selector: the
 * pods it selects that have an IP, split into ready and not-ready addresses, and the Service's
 * ports resolved against each pod (a named targetPort is looked up in the pod's container ports).
 * Pods that resolve to the same port list share one subset / one slice.
 */
import type { Endpoint, EndpointAddress, EndpointPort, EndpointSubset, Pod, Service } from '@nodelet/api';
import { isPodReady } from '../util/pods.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';

export function selectedPods(svc: Service, pods: readonly Pod[]): Pod[] {
  const sel = svc.spec?.selector;
  if (!sel || Object.keys(sel).length === 0) return [];
  return pods.filter(
    (p) =>
      p.metadata.namespace === svc.metadata.namespace &&
      Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v) &&
      !!p.status?.podIP &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed',
  );
}

/** The service ports resolved for one pod; a named targetPort the pod lacks drops that port. */
export function resolvePorts(svc: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of svc.spec?.ports ?? []) {
    const target = sp.targetPort ?? sp.port;
    let port: number | undefined;
    if (typeof target === 'number') port = target;
    else if (/^\d+$/.test(target)) port = Number(target);
    else {
      for (const c of pod.spec?.containers ?? []) {
        const p = c.ports?.find((x) => x.name === target && (x.protocol ?? 'TCP') === (sp.protocol ?? 'TCP'));
        if (p) port = p.containerPort;
      }
    }
    if (port === undefined) continue;
    const ep: EndpointPort = { port, protocol: sp.protocol ?? 'TCP' };
    if (sp.name) ep.name = sp.name;
    if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
    out.push(ep);
  }
  return out;
}

/**
 * A pod's `spec.hostname` is published as its endpoint's hostname when its `spec.subdomain` names
 * the Service (upstream ShouldSetHostname): that is what `<hostname>.<svc>.<ns>.svc` DNS names.
 */
function hostnameFor(svc: Service, pod: Pod): string | undefined {
  const h = pod.spec?.hostname;
  return h && pod.spec?.subdomain === svc.metadata.name && pod.metadata.namespace === svc.metadata.namespace ? h : undefined;
}

function ref(pod: Pod): { kind: string; namespace?: string; name?: string; uid?: string } {
  return { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
}

const portsKey = (ports: EndpointPort[]): string => JSON.stringify(ports);
const byIp = (a: { ip: string }, b: { ip: string }): number => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0);

/** Endpoints `subsets`, deterministic (sorted by port set and IP) so unchanged input writes nothing. */
export function computeSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  for (const pod of selectedPods(svc, pods)) {
    if (pod.metadata.deletionTimestamp && !publishNotReady) continue;
    const ports = resolvePorts(svc, pod);
    if ((svc.spec?.ports?.length ?? 0) > 0 && ports.length === 0) continue;
    const key = portsKey(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, ready: [], notReady: [] }));
    const addr: EndpointAddress = { ip: pod.status!.podIP!, targetRef: ref(pod) };
    const hostname = hostnameFor(svc, pod);
    if (hostname) addr.hostname = hostname;
    if (pod.spec?.nodeName) addr.nodeName = pod.spec.nodeName;
    if (publishNotReady || isPodReady(pod)) g.ready.push(addr);
    else g.notReady.push(addr);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, g]) => {
      const s: EndpointSubset = {};
      if (g.ready.length) s.addresses = g.ready.sort(byIp);
      if (g.notReady.length) s.notReadyAddresses = g.notReady.sort(byIp);
      if (g.ports.length) s.ports = g.ports;
      return s;
    });
}

export interface SliceContent {
  ports: EndpointPort[];
  endpoints: Endpoint[];
}

/** One slice content per distinct port set, endpoints with ready/serving/terminating conditions. */
export function computeSlices(svc: Service, pods: readonly Pod[]): SliceContent[] {
  const groups = new Map<string, SliceContent>();
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  for (const pod of selectedPods(svc, pods)) {
    const ports = resolvePorts(svc, pod);
    if ((svc.spec?.ports?.length ?? 0) > 0 && ports.length === 0) continue;
    const key = portsKey(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, endpoints: [] }));
    const terminating = !!pod.metadata.deletionTimestamp;
    const serving = isPodReady(pod);
    const ep: Endpoint = {
      addresses: [pod.status!.podIP!],
      conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating },
      targetRef: ref(pod),
    };
    const hostname = hostnameFor(svc, pod);
    if (hostname) ep.hostname = hostname;
    if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
    g.endpoints.push(ep);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, g]) => ({ ports: g.ports, endpoints: g.endpoints.sort((a, b) => byIp({ ip: a.addresses[0]! }, { ip: b.addresses[0]! })) }));
}
