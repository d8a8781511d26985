/**
 * The resolver's view of the cluster: Services, the endpoints DNS publishes, namespaces and (for
 * `verified` pod records) pod IPs, indexed for the lookups the records need. Fed by informers
 * (cluster-informers.ts) or directly by tests; everything is in memory, so it keeps answering with
 * the last state it saw while the API server is away.
 *
 * Which endpoints are published follows CoreDNS's EndpointSlice transform: an endpoint whose
 * `conditions.ready` is false is left out (unset counts as ready); FQDN slices and slices without
 * the `kubernetes.io/service-name` label are ignored.
 *
 * Not safe for concurrent writers, which JavaScript does not have; reads see the state after the
 * last handler that ran.
 */
import type { EndpointSlice, Namespace, Pod, Service } from '@nodelet/api/agent';
import { ipKey } from './names.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface PublishedAddress {
  ip: string;
  hostname?: string;
}

export interface PublishedPort {
  name: string;
  port: number;
  protocol: string;
}

/** One slice's published endpoints: every address serves every port (no ports: none declared). */
export interface EndpointGroup {
  ports: readonly PublishedPort[];
  addresses: readonly PublishedAddress[];
}

export interface EndpointRef {
  namespace: string;
  service: string;
  address: PublishedAddress;
}

/** The read side the records are computed from (a test can implement it with plain maps). */
export interface ClusterView {
  /** False until every source has delivered its first list (CoreDNS answers SERVFAIL meanwhile). */
  synced(): boolean;
  /** Seconds since the epoch of the last change: the SOA serial. */
  serial(): number;
  namespaceExists(namespace: string): boolean;
  service(namespace: string, name: string): Service | undefined;
  endpoints(namespace: string, service: string): readonly EndpointGroup[];
  servicesWithIP(ip: string): readonly Service[];
  endpointsWithIP(ip: string): readonly EndpointRef[];
  /** Namespaces of the pods that hold `ip` (only kept when pods are tracked). */
  podNamespacesWithIP(ip: string): readonly string[];
}

const key = (ns: string | undefined, name: string | undefined): string => `${ns ?? ''}/${name ?? ''}`;

/** Cluster IPs of a Service that are addresses (not `None`, not empty). */
export function clusterIPsOf(svc: Service): string[] {
  const ips = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : svc.spec?.clusterIP ? [svc.spec.clusterIP] : [];
  return ips.filter((ip) => ip && ip !== 'None');
}

export function isHeadless(svc: Service): boolean {
  return (svc.spec?.clusterIPs?.[0] ?? svc.spec?.clusterIP) === 'None';
}

function publishedGroup(slice: EndpointSlice): EndpointGroup | undefined {
  if (slice.addressType === 'FQDN') return undefined;
  const ports = (slice.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port ?? -1, protocol: p.protocol ?? '' }));
  const addresses: PublishedAddress[] = [];
  for (const ep of slice.endpoints ?? []) {
    if (ep.conditions?.ready === false) continue;
    for (const ip of ep.addresses ?? []) addresses.push(ep.hostname ? { ip, hostname: ep.hostname } : { ip });
  }
  return { ports, addresses };
}

export class ClusterIndex implements ClusterView {
  readonly #services = new Map<string, Service>();
  readonly #byClusterIP = new Map<string, Set<string>>();
  /** slice key → its service key and published group. */
  readonly #slices = new Map<string, { service: string; group: EndpointGroup }>();
  readonly #slicesOfService = new Map<string, Set<string>>();
  readonly #byEndpointIP = new Map<string, Set<string>>();
  readonly #namespaces = new Set<string>();
  readonly #podIPs = new Map<string, Map<string, string>>(); // ip → pod key → namespace
  readonly #podIPsOf = new Map<string, string[]>(); // pod key → ip keys
  readonly #now: () => number;
  readonly #trackNamespaces: boolean;
  #serial: number;
  #synced: () => boolean;

  /**
   * @param o.trackNamespaces false: every namespace counts as existing (no Namespace source).
   * @param o.synced what `synced()` reports (the informers' state); default true.
   */
  constructor(o: { now?: () => number; trackNamespaces?: boolean; synced?: () => boolean } = {}) {
    this.#now = o.now ?? Date.now;
    this.#trackNamespaces = o.trackNamespaces ?? true;
    this.#synced = o.synced ?? (() => true);
    this.#serial = Math.floor(this.#now() / 1000);
  }

  setSynced(fn: () => boolean): void {
    this.#synced = fn;
  }

  synced(): boolean {
    return this.#synced();
  }

  serial(): number {
    return this.#serial;
  }

  #touch(): void {
    this.#serial = Math.max(this.#serial, Math.floor(this.#now() / 1000));
  }

  namespaceExists(namespace: string): boolean {
    return !this.#trackNamespaces || this.#namespaces.has(namespace);
  }

  service(namespace: string, name: string): Service | undefined {
    return this.#services.get(key(namespace, name));
  }

  endpoints(namespace: string, service: string): EndpointGroup[] {
    const out: EndpointGroup[] = [];
    for (const s of this.#slicesOfService.get(key(namespace, service)) ?? []) out.push(this.#slices.get(s)!.group);
    return out;
  }

  servicesWithIP(ip: string): Service[] {
    const k = ipKey(ip);
    return [...(k ? (this.#byClusterIP.get(k) ?? []) : [])].map((s) => this.#services.get(s)!).filter(Boolean);
  }

  endpointsWithIP(ip: string): EndpointRef[] {
    const k = ipKey(ip);
    if (!k) return [];
    const out: EndpointRef[] = [];
    for (const sk of this.#byEndpointIP.get(k) ?? []) {
      const s = this.#slices.get(sk);
      if (!s) continue;
      const [namespace = '', service = ''] = s.service.split('/');
      for (const a of s.group.addresses) if (ipKey(a.ip) === k) out.push({ namespace, service, address: a });
    }
    return out;
  }

  podNamespacesWithIP(ip: string): string[] {
    const k = ipKey(ip);
    return [...((k && this.#podIPs.get(k)?.values()) || [])];
  }

  upsertService(svc: Service): void {
    this.deleteService(svc);
    const k = key(svc.metadata.namespace, svc.metadata.name);
    this.#services.set(k, svc);
    for (const ip of clusterIPsOf(svc)) addTo(this.#byClusterIP, ipKey(ip), k);
    this.#touch();
  }

  deleteService(svc: Service): void {
    const k = key(svc.metadata.namespace, svc.metadata.name);
    const old = this.#services.get(k);
    if (!old) return;
    this.#services.delete(k);
    for (const ip of clusterIPsOf(old)) removeFrom(this.#byClusterIP, ipKey(ip), k);
    this.#touch();
  }

  upsertSlice(slice: EndpointSlice): void {
    this.deleteSlice(slice);
    const svcName = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    const group = svcName ? publishedGroup(slice) : undefined;
    if (!svcName || !group) return;
    const sk = key(slice.metadata.namespace, slice.metadata.name);
    const service = key(slice.metadata.namespace, svcName);
    this.#slices.set(sk, { service, group });
    addTo(this.#slicesOfService, service, sk);
    for (const a of group.addresses) addTo(this.#byEndpointIP, ipKey(a.ip), sk);
    this.#touch();
  }

  deleteSlice(slice: EndpointSlice): void {
    const sk = key(slice.metadata.namespace, slice.metadata.name);
    const old = this.#slices.get(sk);
    if (!old) return;
    this.#slices.delete(sk);
    removeFrom(this.#slicesOfService, old.service, sk);
    for (const a of old.group.addresses) removeFrom(this.#byEndpointIP, ipKey(a.ip), sk);
    this.#touch();
  }

  upsertNamespace(ns: Namespace): void {
    if (ns.metadata.name) this.#namespaces.add(ns.metadata.name);
    this.#touch();
  }

  deleteNamespace(ns: Namespace): void {
    if (ns.metadata.name) this.#namespaces.delete(ns.metadata.name);
    this.#touch();
  }

  upsertPod(pod: Pod): void {
    this.deletePod(pod);
    const pk = key(pod.metadata.namespace, pod.metadata.name);
    const ips = (pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : [])).map(ipKey).filter((x): x is string => !!x);
    if (ips.length === 0) return;
    this.#podIPsOf.set(pk, ips);
    for (const ip of ips) {
      let m = this.#podIPs.get(ip);
      if (!m) this.#podIPs.set(ip, (m = new Map()));
      m.set(pk, pod.metadata.namespace ?? '');
    }
  }

  deletePod(pod: Pod): void {
    const pk = key(pod.metadata.namespace, pod.metadata.name);
    for (const ip of this.#podIPsOf.get(pk) ?? []) {
      const m = this.#podIPs.get(ip);
      m?.delete(pk);
      if (m?.size === 0) this.#podIPs.delete(ip);
    }
    this.#podIPsOf.delete(pk);
  }
}

function addTo(m: Map<string, Set<string>>, k: string | undefined, v: string): void {
  if (!k) return;
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function removeFrom(m: Map<string, Set<string>>, k: string | undefined, v: string): void {
  if (!k) return;
  const s = m.get(k);
  s?.delete(v);
  if (s?.size === 0) m.delete(k);
}
