/**
 * What the `ip nodelet-proxy` table holds for the port models (`buildTableState`, data) and the
 * whole-table transaction of a full sync (`renderFull`): pure functions, so every rule is
 * table-tested and the same input gives the same bytes. Partial syncs diff two states
 * (partial.ts). The layout follows kube-proxy's
 * nftables mode (KEP-3866); docs/services.md walks through it.
 *
 *   prerouting/output (nat, dstnat) ─▶ services ─▶ @service-ips / @service-nodeports
 *        ─▶ service-… (numgen random mod N) ─▶ endpoint-… (mark for masquerade?, dnat)
 *   input/forward/output (filter, dstnat-10) ─▶ @no-endpoint-services / @no-endpoint-nodeports ─▶ reject
 *   forward / output after dnat (filter) ─▶ cluster-ips-check: any service-CIDR address left ─▶ reject
 *   postrouting (nat, srcnat) ─▶ masquerading: mark 0x4000 ─▶ masquerade
 *
 * A full sync is one transaction (`table` / `delete table` / `table { … }`) and a partial one
 * another: nft applies each atomically, so no packet ever sees a half-written table.
 */
import type { ServicePortModel } from './model.js';
import { categorize, portKey } from './model.js';
import { setBlock, type NamedSet } from './contribution.js';
import { affinitySetName, clusterChainName, endpointChainName, externalChainName, localChainName } from './names.js';
import { hasExternalAddresses } from './model-external.js';
import { firewallBaseChains, renderExternalAddresses } from './render-external.js';

export const TABLE = 'nodelet-proxy';
/** kube-proxy's default masquerade bit 14. */
export const MASQ_MARK = '0x4000';

export interface RenderOptions {
  nodeName: string;
  serviceCIDR: string;
  clusterCIDR: string;
  /** Addresses that accept NodePorts; undefined = every local address (`fib daddr type local`). */
  nodePortIPs?: string[];
  /** NodePorts on 127.0.0.1 too (needs route_localnet). */
  localhostNodePorts: boolean;
  table?: string;
}

/** A live affinity entry carried into the next table so ClientIP stickiness survives a sync. */
export interface AffinityEntry {
  ip: string;
  expiresS: number;
}

export interface RenderedTable {
  /** The full transaction for `nft -f`. */
  script: string;
  services: number;
  endpoints: number;
  /** Service ports without endpoints reachable from this node, by traffic policy. */
  noLocalEndpoints: { internal: number; external: number };
}

/** The verdict maps and sets whose elements are per service port. */
export const ELEMENT_CONTAINERS = ['cluster-ips', 'service-ips', 'service-nodeports', 'no-endpoint-services', 'no-endpoint-nodeports', 'firewall-ips'] as const;
export type ElementContainer = (typeof ELEMENT_CONTAINERS)[number];

/** One element of a map or set: its key (`10.96.0.5 . tcp . 80`), verdict and comment. */
export interface TableElement {
  /** The verdict (`goto service-…`, `drop`); undefined in a set. */
  value?: string;
  comment?: string;
}

/**
 * Everything the table holds, as data: what a full sync writes whole and a partial sync diffs
 * against the previous state (partial.ts). Built by `buildTableState`, pure.
 */
export interface TableState {
  /** The fixed chains (hooks, dispatch, checks), in order; they depend on the options only. */
  base: ReadonlyArray<readonly [string, readonly string[]]>;
  /** The per-service chains (`service-…`, `local-…`, `external-…`, `endpoint-…`) and their rules. */
  chains: Map<string, string[]>;
  /** The per-endpoint `affinity-…` sets and their timeout in seconds. */
  affinitySets: Map<string, number>;
  /** Elements of the verdict maps and the cluster-ips set, by key. */
  elements: Record<ElementContainer, Map<string, TableElement>>;
  /** Named sets and maps contributed by others (contribution.ts: NetworkPolicy), by name. */
  sets: ReadonlyMap<string, NamedSet>;
  services: number;
  endpoints: number;
  noLocalEndpoints: { internal: number; external: number };
}

/** `key [comment "…"] [: verdict]`, as nft writes an element. */
export function elementText(key: string, e: TableElement): string {
  return `${key}${e.comment !== undefined ? ` ${comment(e.comment)}` : ''}${e.value !== undefined ? ` : ${e.value}` : ''}`;
}

class Builder {
  readonly chains = new Map<string, string[]>();
  readonly affinitySets = new Map<string, number>();
  readonly elements = Object.fromEntries(ELEMENT_CONTAINERS.map((c) => [c, new Map<string, TableElement>()])) as Record<ElementContainer, Map<string, TableElement>>;

  chain(name: string): string[] {
    let c = this.chains.get(name);
    if (!c) this.chains.set(name, (c = []));
    return c;
  }

  element(container: ElementContainer, key: string, e: TableElement = {}): void {
    this.elements[container].set(key, e);
  }
}

const comment = (s: string): string => `comment ${JSON.stringify(s)}`;

function renderPort(b: Builder, p: ServicePortModel, o: RenderOptions): { internalMissing: boolean; externalMissing: boolean; endpoints: number } {
  const c = categorize(p, o.nodeName);
  const proto = p.protocol;
  const svcName = portKey(p);
  const clusterChain = clusterChainName(p);
  const localChain = localChainName(p);
  const extChain = externalChainName(p);
  const hasInternal = p.internalLocal ? c.local.length > 0 : c.hasEndpoints;
  const hasExternal = p.externalLocal ? c.local.length > 0 : c.hasEndpoints;
  const internalChain = p.internalLocal ? localChain : clusterChain;
  const externalPolicyChain = p.externalLocal ? localChain : clusterChain;
  const external = p.nodePort !== undefined || hasExternalAddresses(p);
  const usesExtChain = c.hasEndpoints && external;
  // No endpoints at all: reject (ICMP port unreachable). Endpoints only elsewhere while the
  // policy is Local: drop, as kube-proxy does.
  const internalVerdict = c.hasEndpoints ? 'drop' : 'goto reject-chain';
  const externalVerdict = c.hasEndpoints ? 'drop' : 'goto reject-chain';

  b.element('cluster-ips', p.clusterIP);
  const key = `${p.clusterIP} . ${proto} . ${p.port}`;
  if (hasInternal) b.element('service-ips', key, { value: `goto ${internalChain}` });
  else b.element('no-endpoint-services', key, { comment: svcName, value: internalVerdict });
  if (p.nodePort !== undefined) {
    const npKey = `${proto} . ${p.nodePort}`;
    if (c.hasEndpoints) b.element('service-nodeports', npKey, { value: `goto ${extChain}` });
    if (!hasExternal) b.element('no-endpoint-nodeports', npKey, { comment: svcName, value: externalVerdict });
  }
  renderExternalAddresses(b, p, { hasEndpoints: c.hasEndpoints, hasExternal, svcName });
  // Masquerade what reaches the ClusterIP from outside the pod network (the node itself, other
  // hosts routing the service CIDR here), so replies come back through this node.
  if (hasInternal) b.chain(internalChain).push(`ip daddr ${p.clusterIP} ${proto} dport ${p.port} ip saddr != ${o.clusterCIDR} jump mark-for-masquerade`);
  if (usesExtChain) {
    const ext = b.chain(extChain);
    if (!p.externalLocal) ext.push('jump mark-for-masquerade');
    else {
      ext.push(`ip saddr ${o.clusterCIDR} goto ${clusterChain} ${comment('short-circuit pod traffic')}`);
      ext.push(`fib saddr type local jump mark-for-masquerade ${comment('masquerade local traffic')}`);
      ext.push(`fib saddr type local goto ${clusterChain} ${comment('short-circuit local traffic')}`);
    }
    if (hasExternal) ext.push(`goto ${externalPolicyChain}`);
  }
  if (p.affinityTimeoutS !== undefined) for (const e of c.reachable) b.affinitySets.set(affinitySetName(p, e), p.affinityTimeoutS);
  const dispatch = (chain: string, eps: typeof c.cluster): void => {
    const rules = b.chain(chain);
    if (p.affinityTimeoutS !== undefined) for (const e of eps) rules.push(`ip saddr @${affinitySetName(p, e)} goto ${endpointChainName(p, e)}`);
    rules.push(`numgen random mod ${eps.length} vmap { ${eps.map((e, i) => `${i} : goto ${endpointChainName(p, e)}`).join(', ')} }`);
  };
  if (c.usesClusterChain) dispatch(clusterChain, c.cluster);
  if (c.usesLocalChain) dispatch(localChain, c.local);
  for (const e of c.reachable) {
    const rules = b.chain(endpointChainName(p, e));
    // Hairpin: a pod that reaches itself through its Service must see the reply come from the
    // node, not from itself, or it would answer itself directly and drop the reply.
    rules.push(`ip saddr ${e.ip} jump mark-for-masquerade`);
    if (p.affinityTimeoutS !== undefined) rules.push(`update @${affinitySetName(p, e)} { ip saddr }`);
    rules.push(`meta l4proto ${proto} dnat to ${e.ip}:${e.port}`);
  }
  return { internalMissing: c.hasEndpoints && !hasInternal, externalMissing: c.hasEndpoints && external && !hasExternal, endpoints: c.reachable.length };
}

function nodePortMatch(o: RenderOptions): string[] {
  const out: string[] = [];
  if (o.nodePortIPs === undefined) out.push('fib daddr type local ip daddr != 127.0.0.0/8');
  else if (o.nodePortIPs.length) out.push(`ip daddr { ${o.nodePortIPs.join(', ')} }`);
  if (o.localhostNodePorts) out.push('ip daddr 127.0.0.1');
  return out;
}

function elements(items: readonly string[]): string[] {
  return items.length ? [`\t\telements = { ${items.join(',\n\t\t\t')} }`] : [];
}

interface PortFragment {
  /** The port model and options it was built from, to reuse it while they stay the same. */
  source: string;
  b: Builder;
  internalMissing: boolean;
  externalMissing: boolean;
  endpoints: number;
}

/**
 * Per-port pieces of the last state built, so an unchanged port (most of them, in a sync after
 * one EndpointSlice change) costs a string comparison instead of hashing its chain names again.
 * The reused rule arrays and elements keep their identity, which makes the diff cheap too.
 */
export class TableStateCache {
  fragments = new Map<string, PortFragment>();
}

/**
 * What the table holds for `ports` (an empty list gives the base table installed at start).
 * Pure apart from `cache`, which only saves work: the result is the same with or without it.
 */
export function buildTableState(ports: readonly ServicePortModel[], o: RenderOptions, cache?: TableStateCache): TableState {
  const b = new Builder();
  let endpoints = 0;
  const noLocal = { internal: 0, external: 0 };
  const optsKey = JSON.stringify([o.nodeName, o.clusterCIDR]);
  const next = new Map<string, PortFragment>();
  for (const p of ports) {
    const source = optsKey + JSON.stringify(p);
    const key = `${portKey(p)} ${p.clusterIP}`;
    let f = cache?.fragments.get(key);
    if (f?.source !== source) {
      const pb = new Builder();
      f = { source, b: pb, ...renderPort(pb, p, o) };
    }
    next.set(key, f);
    for (const [name, rules] of f.b.chains) {
      const have = b.chains.get(name);
      // Two ports never share a chain; if they did, both sets of rules are kept (never mutate a cached array).
      if (have) b.chains.set(name, [...have, ...rules]);
      else b.chains.set(name, rules);
    }
    for (const [name, t] of f.b.affinitySets) b.affinitySets.set(name, t);
    for (const c of ELEMENT_CONTAINERS) for (const [k, e] of f.b.elements[c]) b.elements[c].set(k, e);
    endpoints += f.endpoints;
    if (f.internalMissing) noLocal.internal++;
    if (f.externalMissing) noLocal.external++;
  }
  if (cache) cache.fragments = next;
  return { base: baseChains(o), chains: b.chains, affinitySets: b.affinitySets, elements: b.elements, sets: new Map(), services: ports.length, endpoints, noLocalEndpoints: noLocal };
}

function baseChains(o: RenderOptions): Array<[string, string[]]> {
  const np = nodePortMatch(o);
  return [
    ['filter-input', ['type filter hook input priority -110; policy accept;', 'ct state new jump nodeport-endpoints-check', 'ct state new jump service-endpoints-check',
      // route_localnet lets 127.0.0.1 NodePorts be DNATed out; never let the outside reach 127/8 (CVE-2020-8558).
      `ip daddr 127.0.0.0/8 ip saddr != 127.0.0.0/8 ct state != { established, related } ct status & dnat == 0 drop ${comment('block incoming localnet connections')}`]],
    ['filter-forward', ['type filter hook forward priority -110; policy accept;', 'ct state new jump service-endpoints-check', 'ct state new jump cluster-ips-check']],
    ['filter-output', ['type filter hook output priority -110; policy accept;', 'ct state new jump service-endpoints-check']],
    ['filter-output-post-dnat', ['type filter hook output priority -90; policy accept;', 'ct state new jump cluster-ips-check']],
    ['nat-prerouting', ['type nat hook prerouting priority -100; policy accept;', 'jump services']],
    ['nat-output', ['type nat hook output priority -100; policy accept;', 'jump services']],
    ['nat-postrouting', ['type nat hook postrouting priority 100; policy accept;', 'jump masquerading']],
    ['services', ['ip daddr . meta l4proto . th dport vmap @service-ips', ...np.map((m) => `${m} meta l4proto . th dport vmap @service-nodeports`)]],
    ['service-endpoints-check', ['ip daddr . meta l4proto . th dport vmap @no-endpoint-services']],
    ['nodeport-endpoints-check', np.map((m) => `${m} meta l4proto . th dport vmap @no-endpoint-nodeports`)],
    ['cluster-ips-check', [`ip daddr @cluster-ips reject ${comment('reject traffic to invalid ports of ClusterIPs')}`, `ip daddr ${o.serviceCIDR} reject ${comment('reject traffic to unallocated ClusterIPs')}`]],
    ...firewallBaseChains(),
    ['reject-chain', ['reject']],
    ['mark-for-masquerade', [`meta mark set meta mark | ${MASQ_MARK}`]],
    ['masquerading', [`meta mark & ${MASQ_MARK} == 0 return`, `meta mark set meta mark ^ ${MASQ_MARK}`, 'masquerade fully-random']],
  ];
}

/**
 * The whole-table transaction (`table` / `delete table` / `table { … }`) for `state`, with the
 * live affinity entries in `carry` written into their sets with their remaining time.
 */
export function renderFull(state: TableState, o: Pick<RenderOptions, 'table'>, carry: ReadonlyMap<string, readonly AffinityEntry[]> = new Map()): string {
  const table = o.table ?? TABLE;
  const els = (c: ElementContainer): string[] => [...state.elements[c]].map(([k, e]) => elementText(k, e));
  const out: string[] = [`table ip ${table}`, `delete table ip ${table}`, `table ip ${table} {`, `\t${comment('nodelet service proxy (docs/services.md)')}`];
  const vmap = (name: ElementContainer, type: string, what: string): void => {
    out.push(`\tmap ${name} {`, `\t\ttype ${type} : verdict`, `\t\t${comment(what)}`, ...elements(els(name)), '\t}');
  };
  out.push('\tset cluster-ips {', '\t\ttype ipv4_addr', `\t\t${comment('active ClusterIPs')}`, ...elements(els('cluster-ips')), '\t}');
  vmap('service-ips', 'ipv4_addr . inet_proto . inet_service', 'ClusterIP traffic');
  vmap('service-nodeports', 'inet_proto . inet_service', 'NodePort traffic');
  vmap('no-endpoint-services', 'ipv4_addr . inet_proto . inet_service', 'reject or drop packets to services with no endpoints');
  vmap('no-endpoint-nodeports', 'inet_proto . inet_service', 'reject or drop packets to service nodeports with no endpoints');
  vmap('firewall-ips', 'ipv4_addr . inet_proto . inet_service', 'load balancer source ranges');
  for (const [name, timeoutS] of state.affinitySets) {
    const lines = [`\tset ${name} {`, '\t\ttype ipv4_addr', '\t\tflags dynamic,timeout', `\t\ttimeout ${timeoutS}s`];
    const live = (carry.get(name) ?? []).filter((x) => x.expiresS > 0 && x.expiresS <= timeoutS);
    if (live.length) lines.push(`\t\telements = { ${live.map((x) => `${x.ip} expires ${x.expiresS}s`).join(', ')} }`);
    out.push(...lines, '\t}');
  }
  for (const [name, s] of state.sets) out.push(...setBlock(name, s, elementText));
  for (const [name, rules] of [...state.base, ...state.chains]) out.push(`\tchain ${name} {`, ...rules.map((r) => `\t\t${r}`), '\t}');
  out.push('}', '');
  return out.join('\n');
}

/** Renders the whole table for `ports` (an empty list gives the base table installed at start). */
export function renderTable(ports: readonly ServicePortModel[], o: RenderOptions, carry: ReadonlyMap<string, readonly AffinityEntry[]> = new Map()): RenderedTable {
  const state = buildTableState(ports, o);
  return { script: renderFull(state, o, carry), services: state.services, endpoints: state.endpoints, noLocalEndpoints: state.noLocalEndpoints };
}

/** The transaction that removes the table (idempotent: the `table` line creates it first). */
export function renderDelete(table = TABLE): string {
  return `table ip ${table}\ndelete table ip ${table}\n`;
}
