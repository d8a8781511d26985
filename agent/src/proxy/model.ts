/**
 * What the proxy programs, computed from Services and EndpointSlices: one `ServicePortModel` per
 * (Service, port) with a ClusterIP, its endpoints from the Service's slices, and the endpoints
 * each traffic policy sends to (kube-proxy's CategorizeEndpoints). Pure and deterministic (sorted),
 * so equal input renders byte-equal tables.
 */
import { isIPv4 } from 'node:net';
import type { EndpointSlice, Service } from '@nodelet/api/agent';
import { externalAddresses, hasExternalAddresses, type ExternalAddresses } from './model-external.js';

export type L4Protocol = 'tcp' | 'udp' | 'sctp';

export interface ProxyEndpoint {
  ip: string;
  port: number;
  nodeName?: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface ServicePortModel extends ExternalAddresses {
  namespace: string;
  name: string;
  /** The ServicePort's name ('' when unnamed). */
  portName: string;
  protocol: L4Protocol;
  clusterIP: string;
  port: number;
  nodePort?: number;
  externalLocal: boolean;
  internalLocal: boolean;
  /** ClientIP session affinity window in seconds; undefined without affinity. */
  affinityTimeoutS?: number;
  /** Every endpoint of the port from the Service's slices (deduplicated by ip:port). */
  endpoints: ProxyEndpoint[];
  /** Set when the endpoints were replaced by the node-local DNS resolver (see `localDNS`). */
  localDNS?: boolean;
}

export interface ModelInput {
  services: readonly Service[];
  slices: readonly EndpointSlice[];
  nodeName: string;
  /** Proxy SCTP ports (the kernel supports SCTP); otherwise they are left out. */
  sctp: boolean;
  localDNS?: { ip: string; port: number };
}

/** The Service the node-local resolver stands in for. */
export const KUBE_DNS = { namespace: 'kube-system', name: 'kube-dns', port: 53 } as const;
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const DEFAULT_AFFINITY_S = 10800;

/** `ns/name:port/proto`, kube-proxy's ServicePortName string (port name may be empty). */
export function portKey(p: Pick<ServicePortModel, 'namespace' | 'name' | 'portName' | 'protocol'>): string {
  return `${p.namespace}/${p.name}:${p.portName}/${p.protocol}`;
}

function slicesByService(slices: readonly EndpointSlice[]): Map<string, EndpointSlice[]> {
  const out = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!svc || s.addressType !== 'IPv4') continue;
    const key = `${s.metadata.namespace}/${svc}`;
    const list = out.get(key);
    if (list) list.push(s);
    else out.set(key, [s]);
  }
  return out;
}

function endpointsFor(slices: readonly EndpointSlice[], portName: string, protocol: string): ProxyEndpoint[] {
  const seen = new Map<string, ProxyEndpoint>();
  for (const s of slices) {
    const sp = (s.ports ?? []).find((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol);
    if (!sp || typeof sp.port !== 'number') continue;
    for (const ep of s.endpoints ?? []) {
      const ip = ep.addresses?.[0];
      if (!ip || !isIPv4(ip)) continue;
      // A nil condition means "unknown", which the API defines as ready (discovery/v1 docs).
      const ready = ep.conditions?.ready ?? true;
      const e: ProxyEndpoint = { ip, port: sp.port, ready, serving: ep.conditions?.serving ?? ready, terminating: ep.conditions?.terminating ?? false };
      if (ep.nodeName) e.nodeName = ep.nodeName;
      const key = `${ip}:${sp.port}`;
      if (!seen.has(key)) seen.set(key, e);
    }
  }
  return [...seen.values()].sort((a, b) => cmpIp(a.ip, b.ip) || a.port - b.port);
}

function cmpIp(a: string, b: string): number {
  const n = (ip: string): number => ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  return n(a) - n(b);
}

/** Builds the sorted port models. Services without an IPv4 ClusterIP (headless, ExternalName) get none. */
export function buildModel(input: ModelInput): ServicePortModel[] {
  const bySvc = slicesByService(input.slices);
  const out: ServicePortModel[] = [];
  for (const svc of input.services) {
    const spec = svc.spec;
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name ?? '';
    if (!spec || spec.type === 'ExternalName') continue;
    const clusterIP = spec.clusterIPs?.find((ip) => isIPv4(ip)) ?? spec.clusterIP;
    if (!clusterIP || !isIPv4(clusterIP)) continue;
    const slices = bySvc.get(`${ns}/${name}`) ?? [];
    const affinity = spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_S) : undefined;
    const ext = externalAddresses(svc);
    const external = spec.type === 'NodePort' || spec.type === 'LoadBalancer' || hasExternalAddresses(ext);
    for (const p of spec.ports ?? []) {
      const protocol = (p.protocol ?? 'TCP').toLowerCase() as L4Protocol;
      if (protocol === 'sctp' && !input.sctp) continue;
      const m: ServicePortModel = {
        namespace: ns,
        name,
        portName: p.name ?? '',
        protocol,
        clusterIP,
        port: p.port,
        externalLocal: external && spec.externalTrafficPolicy === 'Local',
        internalLocal: spec.internalTrafficPolicy === 'Local',
        endpoints: endpointsFor(slices, p.name ?? '', p.protocol ?? 'TCP'),
        ...ext,
      };
      if (external && p.nodePort) m.nodePort = p.nodePort;
      if (affinity !== undefined) m.affinityTimeoutS = affinity;
      // HACK(node-local DNS): the resolver in this agent answers for kube-dns, so port 53 goes
      // there whatever the slices say (docs/services.md "Cluster DNS hook").
      if (input.localDNS && ns === KUBE_DNS.namespace && name === KUBE_DNS.name && p.port === KUBE_DNS.port && protocol !== 'sctp') {
        m.endpoints = [{ ip: input.localDNS.ip, port: input.localDNS.port, nodeName: input.nodeName, ready: true, serving: true, terminating: false }];
        m.localDNS = true;
      }
      out.push(m);
    }
  }
  return out.sort((a, b) => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0));
}

/**
 * The endpoints a policy uses: the ready ones; when none is ready, the serving-and-terminating
 * ones (so a rolling update's last pods keep answering), as kube-proxy does.
 */
export function usableEndpoints(eps: readonly ProxyEndpoint[]): ProxyEndpoint[] {
  const ready = eps.filter((e) => e.ready);
  if (ready.length) return ready;
  return eps.filter((e) => e.serving && e.terminating);
}

export interface Categorized {
  cluster: ProxyEndpoint[];
  local: ProxyEndpoint[];
  /** Any usable endpoint anywhere in the cluster. */
  hasEndpoints: boolean;
  /** cluster (when the cluster chain is used) ∪ local (when the local chain is used). */
  reachable: ProxyEndpoint[];
  usesClusterChain: boolean;
  usesLocalChain: boolean;
}

/** Which endpoints ClusterIP and NodePort traffic may reach from this node. */
export function categorize(p: ServicePortModel, nodeName: string): Categorized {
  const cluster = usableEndpoints(p.endpoints);
  const local = usableEndpoints(p.endpoints.filter((e) => e.nodeName === nodeName));
  const external = p.nodePort !== undefined || hasExternalAddresses(p);
  // The cluster chain also serves eTP=Local short-circuits (pods and the node itself).
  const usesClusterChain = cluster.length > 0 && (!p.internalLocal || external);
  const usesLocalChain = local.length > 0 && (p.internalLocal || (external && p.externalLocal));
  const reachable = new Map<string, ProxyEndpoint>();
  if (usesClusterChain) for (const e of cluster) reachable.set(`${e.ip}:${e.port}`, e);
  if (usesLocalChain) for (const e of local) reachable.set(`${e.ip}:${e.port}`, e);
  return { cluster, local, hasEndpoints: cluster.length > 0, reachable: [...reachable.values()], usesClusterChain, usesLocalChain };
}
