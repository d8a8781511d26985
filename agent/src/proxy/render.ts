/**
 * Renders the whole `ip nodelet-proxy` table from the port models: a pure function, so every
 * rule is table-tested and the same input gives the same bytes. The layout follows kube-proxy's
 * nftables mode (KEP-3866); docs/services.md walks through it.
 *
 *   prerouting/output (nat, dstnat) ─▶ services ─▶ @service-ips / @service-nodeports
 *        ─▶ service-… (numgen random mod N) ─▶ endpoint-… (mark for masquerade?, dnat)
 *   input/forward/output (filter, dstnat-10) ─▶ @no-endpoint-services / @no-endpoint-nodeports ─▶ reject
 *   forward / output after dnat (filter) ─▶ cluster-ips-check: any service-CIDR address left ─▶ reject
 *   postrouting (nat, srcnat) ─▶ masquerading: mark 0x4000 ─▶ masquerade
 *
 * The result is one transaction (`table` / `delete table` / `table { … }`): nft applies it
 * atomically, so no packet ever sees a half-written table.
 */
import type { ServicePortModel } from './model.js';
import { categorize, portKey } from './model.js';
import { affinitySetName, clusterChainName, endpointChainName, externalChainName, localChainName } from './names.js';

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

class Builder {
  readonly chains = new Map<string, string[]>();
  readonly sets: string[] = [];
  readonly clusterIPs = new Set<string>();
  readonly serviceIPs: string[] = [];
  readonly nodePorts: string[] = [];
  readonly noEpServices: string[] = [];
  readonly noEpNodePorts: string[] = [];

  chain(name: string): string[] {
    let c = this.chains.get(name);
    if (!c) this.chains.set(name, (c = []));
    return c;
  }
}

const comment = (s: string): string => `comment ${JSON.stringify(s)}`;

function renderPort(b: Builder, p: ServicePortModel, o: RenderOptions, carry: ReadonlyMap<string, readonly AffinityEntry[]>): { internalMissing: boolean; externalMissing: boolean; endpoints: number } {
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
  const usesExtChain = c.hasEndpoints && p.nodePort !== undefined;
  // No endpoints at all: reject (ICMP port unreachable). Endpoints only elsewhere while the
  // policy is Local: drop, as kube-proxy does.
  const internalVerdict = c.hasEndpoints ? 'drop' : 'goto reject-chain';
  const externalVerdict = c.hasEndpoints ? 'drop' : 'goto reject-chain';

  b.clusterIPs.add(p.clusterIP);
  const key = `${p.clusterIP} . ${proto} . ${p.port}`;
  if (hasInternal) b.serviceIPs.push(`${key} : goto ${internalChain}`);
  else b.noEpServices.push(`${key} ${comment(svcName)} : ${internalVerdict}`);
  if (p.nodePort !== undefined) {
    if (c.hasEndpoints) b.nodePorts.push(`${proto} . ${p.nodePort} : goto ${extChain}`);
    if (!hasExternal) b.noEpNodePorts.push(`${proto} . ${p.nodePort} ${comment(svcName)} : ${externalVerdict}`);
  }
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
  if (p.affinityTimeoutS !== undefined) {
    for (const e of c.reachable) {
      const name = affinitySetName(p, e);
      const lines = [`set ${name} {`, '\t\ttype ipv4_addr', '\t\tflags dynamic,timeout', `\t\ttimeout ${p.affinityTimeoutS}s`];
      const live = (carry.get(name) ?? []).filter((x) => x.expiresS > 0 && x.expiresS <= p.affinityTimeoutS!);
      if (live.length) lines.push(`\t\telements = { ${live.map((x) => `${x.ip} expires ${x.expiresS}s`).join(', ')} }`);
      b.sets.push(lines.join('\n') + '\n\t}');
    }
  }
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
  return { internalMissing: c.hasEndpoints && !hasInternal, externalMissing: c.hasEndpoints && p.nodePort !== undefined && !hasExternal, endpoints: c.reachable.length };
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

/** Renders the table for `ports` (an empty list gives the base table installed at start). */
export function renderTable(ports: readonly ServicePortModel[], o: RenderOptions, carry: ReadonlyMap<string, readonly AffinityEntry[]> = new Map()): RenderedTable {
  const table = o.table ?? TABLE;
  const b = new Builder();
  let endpoints = 0;
  const noLocal = { internal: 0, external: 0 };
  for (const p of ports) {
    const r = renderPort(b, p, o, carry);
    endpoints += r.endpoints;
    if (r.internalMissing) noLocal.internal++;
    if (r.externalMissing) noLocal.external++;
  }
  const np = nodePortMatch(o);
  const base: Array<[string, string[]]> = [
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
    ['reject-chain', ['reject']],
    ['mark-for-masquerade', [`meta mark set meta mark | ${MASQ_MARK}`]],
    ['masquerading', [`meta mark & ${MASQ_MARK} == 0 return`, `meta mark set meta mark ^ ${MASQ_MARK}`, 'masquerade fully-random']],
  ];
  const out: string[] = [`table ip ${table}`, `delete table ip ${table}`, `table ip ${table} {`, `\t${comment("nodelet service proxy (docs/services.md); rewritten whole on every sync")}`];
  const vmap = (name: string, type: string, what: string, items: string[]): void => {
    out.push(`\tmap ${name} {`, `\t\ttype ${type} : verdict`, `\t\t${comment(what)}`, ...elements(items), '\t}');
  };
  out.push('\tset cluster-ips {', '\t\ttype ipv4_addr', `\t\t${comment('active ClusterIPs')}`, ...elements([...b.clusterIPs]), '\t}');
  vmap('service-ips', 'ipv4_addr . inet_proto . inet_service', 'ClusterIP traffic', b.serviceIPs);
  vmap('service-nodeports', 'inet_proto . inet_service', 'NodePort traffic', b.nodePorts);
  vmap('no-endpoint-services', 'ipv4_addr . inet_proto . inet_service', 'reject or drop packets to services with no endpoints', b.noEpServices);
  vmap('no-endpoint-nodeports', 'inet_proto . inet_service', 'reject or drop packets to service nodeports with no endpoints', b.noEpNodePorts);
  for (const s of b.sets) out.push(`\t${s}`);
  for (const [name, rules] of [...base, ...b.chains]) out.push(`\tchain ${name} {`, ...rules.map((r) => `\t\t${r}`), '\t}');
  out.push('}', '');
  return { script: out.join('\n'), services: ports.length, endpoints, noLocalEndpoints: noLocal };
}

/** The transaction that removes the table (idempotent: the `table` line creates it first). */
export function renderDelete(table = TABLE): string {
  return `table ip ${table}\ndelete table ip ${table}\n`;
}
