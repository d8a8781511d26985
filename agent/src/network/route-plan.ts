/**
 * The inter-node pod routes a node should hold, and the `ip`/`bridge` commands that take what it
 * holds there. Pure: the route manager (route-manager.ts) reads the kernel's state and the Nodes,
 * this module decides.
 *
 *   Nodes + this node's connected subnets ─▶ planPeers ─▶ desired {routes, fdb, neigh}
 *   desired + actual (read with -json) ─────▶ diffPlan ─▶ argv lists (ip …, bridge …)
 *
 * host-gw: `<podCIDR> via <nodeIP>` — only when the peer's InternalIP is on a directly connected
 * subnet, so the next hop is the peer itself. vxlan: `<podCIDR> via <peer gateway> dev <vtep>
 * onlink`, where the peer gateway is the network address of its pod CIDR (held by its VXLAN
 * device), a permanent neighbour entry maps that address to the peer's VTEP MAC and an FDB entry
 * sends frames for that MAC to the peer's InternalIP.
 *
 * Scope (as flannel owns only the subnets of its network config): an agent plans, and later
 * deletes, only routes whose destination lies inside its cluster CIDR, so agents of two clusters
 * on one machine (two labs, a lab beside a test) never touch each other's routes although both
 * carry ROUTE_PROTO. A peer whose InternalIP is one of this node's own addresses shares the
 * machine (a lab node in the host's namespace): its pod bridge is local, it gets no route.
 */
import { formatIpv4, inIpv4Cidr, parseIpv4Cidr } from '@nodelet/base';

/** The routing protocol number on the agent's pod routes: how it tells its own from others'. */
export const ROUTE_PROTO = 150;
/** The annotation a node publishes its VXLAN endpoint in (JSON `{"vni":1,"vtepMAC":"…"}`). */
export const VXLAN_ANNOTATION = 'nodelet.io/vxlan-backend-data';
/** Flannel's VXLAN numbers on Linux: VNI 1, UDP port 8472; IPv4 + UDP + VXLAN + inner Ethernet headers cost 50 bytes. */
export const VXLAN_DEFAULTS = { vni: 1, port: 8472, overhead: 50, device: 'nodelet.1' } as const;

/**
 * The VXLAN device of a VNI, `nodelet.<vni>` (as flannel's `flannel.<vni>`): agents of two
 * clusters in one network namespace use two VNIs and so two devices, each with its own FDB and
 * neighbour entries, instead of recreating one device with each other's settings. A VNI of 8
 * digits would pass the kernel's 15-character name limit: those are `nlvx.<vni>`.
 */
export function vxlanDeviceName(vni: number): string {
  return vni < 10_000_000 ? `nodelet.${vni}` : `nlvx.${vni}`;
}

export type PodNetworkBackend = 'host-gw' | 'vxlan' | 'none';

/** One other node as read from its Node object. */
export interface Peer {
  name: string;
  /** Its InternalIP (IPv4). */
  ip: string;
  podCIDR: string;
  /** Its VXLAN device's MAC from the annotation, once it has published one. */
  vtepMAC?: string;
}

export interface PodRoute {
  dst: string;
  via: string;
  /** Set on VXLAN routes (`dev <vtep> onlink`). */
  dev?: string;
}
export interface FdbEntry {
  mac: string;
  dst: string;
}
export interface NeighEntry {
  ip: string;
  mac: string;
}
export interface RoutePlan {
  routes: PodRoute[];
  fdb: FdbEntry[];
  neigh: NeighEntry[];
}

/** Whether IPv4 `ip` lies in `cidr`. */
export const inCidr = inIpv4Cidr;

/** Whether every address of `inner` (CIDR, or a bare address as its /32) lies in `outer`. */
export function cidrWithin(inner: string, outer: string): boolean {
  const i = parseIpv4Cidr(inner.includes('/') ? inner : `${inner}/32`);
  const o = parseIpv4Cidr(outer);
  return i.prefix >= o.prefix && inCidr(formatIpv4(i.base), outer);
}

/** The network address of a pod CIDR: the address a node's VXLAN device holds (as /32). */
export function podGateway(podCIDR: string): string {
  return formatIpv4(parseIpv4Cidr(podCIDR).base);
}

/** The canonical form `ip -json route` prints a destination in (a /32 without its suffix). */
export function canonicalDst(cidr: string): string {
  const { base, prefix } = parseIpv4Cidr(cidr);
  return prefix === 32 ? formatIpv4(base) : `${formatIpv4(base)}/${prefix}`;
}

/**
 * The state this node should hold for its peers. `connected` are the subnets of this node's own
 * addresses (CIDR form), `own` the addresses themselves. A peer without a pod CIDR or address, or
 * one needing VXLAN that has not published its VTEP MAC yet, gets nothing (yet); nor does a peer
 * whose pod CIDR lies outside `clusterCIDR` (not this cluster's network) or whose InternalIP is
 * one of `own` (it shares this machine). IPv6 peers are skipped (IPv4 only).
 */
export function planPeers(o: { backend: PodNetworkBackend; peers: readonly Peer[]; connected: readonly string[]; own?: readonly string[]; clusterCIDR: string; vxlanDevice: string }): RoutePlan {
  const plan: RoutePlan = { routes: [], fdb: [], neigh: [] };
  if (o.backend === 'none') return plan;
  for (const p of [...o.peers].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!p.ip || !p.podCIDR || p.ip.includes(':') || p.podCIDR.includes(':')) continue;
    if (!cidrWithin(p.podCIDR, o.clusterCIDR) || o.own?.includes(p.ip)) continue;
    const dst = canonicalDst(p.podCIDR);
    if (o.backend === 'host-gw' && o.connected.some((c) => inCidr(p.ip, c))) {
      plan.routes.push({ dst, via: p.ip });
      continue;
    }
    if (!p.vtepMAC) continue;
    const gw = podGateway(p.podCIDR);
    const mac = p.vtepMAC.toLowerCase();
    plan.routes.push({ dst, via: gw, dev: o.vxlanDevice });
    plan.fdb.push({ mac, dst: p.ip });
    plan.neigh.push({ ip: gw, mac });
  }
  return plan;
}

/**
 * The commands that take `actual` (the agent's own state: routes with ROUTE_PROTO, FDB and
 * permanent neighbour entries on the VXLAN device) to `desired`: replace what differs or is
 * missing, delete what no peer claims. Empty when they agree.
 */
export function diffPlan(desired: RoutePlan, actual: RoutePlan, vxlanDevice: string): string[][] {
  const cmds: string[][] = [];
  const routeKey = (r: PodRoute): string => `${r.dst} ${r.via} ${r.dev ?? ''}`;
  const haveRoutes = new Set(actual.routes.map(routeKey));
  const wantDst = new Set(desired.routes.map((r) => r.dst));
  for (const r of desired.routes) {
    if (haveRoutes.has(routeKey(r))) continue;
    cmds.push(['ip', 'route', 'replace', r.dst, 'via', r.via, ...(r.dev ? ['dev', r.dev, 'onlink'] : []), 'proto', String(ROUTE_PROTO)]);
  }
  for (const r of actual.routes) {
    if (!wantDst.has(r.dst)) cmds.push(['ip', 'route', 'delete', r.dst, 'proto', String(ROUTE_PROTO)]);
  }
  const haveFdb = new Set(actual.fdb.map((f) => `${f.mac} ${f.dst}`));
  const wantFdb = new Set(desired.fdb.map((f) => `${f.mac} ${f.dst}`));
  for (const f of desired.fdb) {
    if (!haveFdb.has(`${f.mac} ${f.dst}`)) cmds.push(['bridge', 'fdb', 'replace', f.mac, 'dev', vxlanDevice, 'dst', f.dst, 'self', 'permanent']);
  }
  for (const f of actual.fdb) {
    if (!wantFdb.has(`${f.mac} ${f.dst}`)) cmds.push(['bridge', 'fdb', 'delete', f.mac, 'dev', vxlanDevice, 'dst', f.dst, 'self']);
  }
  const haveNeigh = new Set(actual.neigh.map((n) => `${n.ip} ${n.mac}`));
  const wantNeighIp = new Set(desired.neigh.map((n) => n.ip));
  for (const n of desired.neigh) {
    if (!haveNeigh.has(`${n.ip} ${n.mac}`)) cmds.push(['ip', 'neigh', 'replace', n.ip, 'lladdr', n.mac, 'dev', vxlanDevice, 'nud', 'permanent']);
  }
  for (const n of actual.neigh) {
    if (!wantNeighIp.has(n.ip)) cmds.push(['ip', 'neigh', 'delete', n.ip, 'dev', vxlanDevice]);
  }
  return cmds;
}

/** The agent's nftables table for pod traffic leaving the cluster (masquerade). */
export const MASQ_TABLE = 'nodelet-pod-network';

/**
 * The masquerade chain of one cluster CIDR in MASQ_TABLE (`masq-10-244-0-0-16`): one chain per
 * cluster, so agents of two clusters on one machine each rewrite only their own.
 */
export function masqueradeChain(clusterCIDR: string): string {
  const { base, prefix } = parseIpv4Cidr(clusterCIDR);
  return `masq-${formatIpv4(base).replaceAll('.', '-')}-${prefix}`;
}

/**
 * One atomic `nft -f` script that (re)writes this cluster's chain in MASQ_TABLE: pod traffic
 * (source in `clusterCIDR`) to anything outside it but multicast leaves with the node's address;
 * pod → pod across nodes keeps its source. Declaring the table and chain first makes the flush
 * valid when they do not exist yet; other clusters' chains are left alone.
 */
export function masqueradeScript(clusterCIDR: string): string {
  const cidr = canonicalDst(clusterCIDR);
  const chain = masqueradeChain(clusterCIDR);
  return [
    `table ip ${MASQ_TABLE} {`,
    `  chain ${chain} {`,
    '    type nat hook postrouting priority srcnat; policy accept;',
    '  }',
    '}',
    `flush chain ip ${MASQ_TABLE} ${chain}`,
    `add rule ip ${MASQ_TABLE} ${chain} ip saddr ${cidr} ip daddr != ${cidr} ip daddr != 224.0.0.0/4 masquerade fully-random`,
    '',
  ].join('\n');
}
