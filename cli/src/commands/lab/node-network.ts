/**
 * The lab's node network: what lets a lab node live in its own network namespace, like a second
 * machine on the first one's LAN (docs/multi-node-lab.md).
 *
 *   host (node 1, server, registry)            netns nodelet-<node> (a further node)
 *   ┌──────────────────────────────┐           ┌──────────────────────────────────────┐
 *   │ bridge <network.bridge>      │           │ eth0 <node IP>/<prefix>              │
 *   │   <host address>/<prefix> ◀──┼─ veth ───▶│ containerd, agent, pod bridge,       │
 *   │   (first address of the CIDR)│  nlv<h>   │ nftables proxy table, DNS <node IP>:53│
 *   └──────────────────────────────┘           └──────────────────────────────────────┘
 *
 * `labUp({ nodeNetwork })` creates the bridge and binds the server and registry to the host
 * address; `ensureNodeNetns` plugs one namespace into it. Nothing routes off the node network:
 * the namespaces have no default route (pods on them reach no outside address).
 *
 * A node `behindRouter` is a machine on another subnet, so that no two nodes share a link:
 *
 *   host bridge ◀─ veth ─▶ netns nodelet-<node>_router: eth0 <node-network address>
 *                                                      eth1 <subnet's 1st address> ◀─ veth ─▶ netns nodelet-<node>: eth0 <subnet's 2nd>
 *   host: <subnet> via <router's node-network address>        node: default via <subnet's 1st address>
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { AgentError, formatIpv4, inIpv4Cidr, parseIpv4 } from '@nodelet/base';
import { run } from '@nodelet/lab-runtime';

export interface NodeNetwork {
  /** The host bridge every node-network namespace is plugged into (at most 15 characters). */
  bridge: string;
  /** An IPv4 network, prefix /16 to /29; the host takes its first address, nodes the next ones. */
  cidr: string;
}

/** Where `ip netns add` mounts a namespace; `nsenter --net=` takes this path. */
export const NETNS_DIR = '/run/netns';

/** The network namespace of lab node `node`. */
export function netnsName(node: string): string {
  return `nodelet-${node}`;
}

/** The host end of `node`'s veth: `nlv` + 8 hex of the name's SHA-256 (interface names stop at 15). */
export function vethName(node: string): string {
  return `nlv${createHash('sha256').update(node).digest('hex').slice(0, 8)}`;
}

/** The command prefix that runs a program in namespace `netns`, and only that namespace. */
export function netnsExec(netns: string): string[] {
  // Not `ip netns exec`: it also unshares the mount namespace and remounts /sys, which hides
  // the cgroup hierarchy from containerd and hides containerd's mounts from the agent.
  return ['nsenter', `--net=${NETNS_DIR}/${netns}`];
}

export { formatIpv4, parseIpv4 };

/** `{ base, prefix }` of an IPv4 CIDR; ERR_INVALID_ARGUMENT unless it is a /16–/29 network address. */
export function parseNodeNetworkCidr(cidr: string): { base: number; prefix: number } {
  const [addr, bits, ...rest] = cidr.split('/');
  const prefix = Number(bits);
  if (rest.length || !addr || !/^\d+$/.test(bits ?? '') || prefix < 16 || prefix > 29) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `node network "${cidr}" must be an IPv4 CIDR from /16 to /29`);
  }
  const base = parseIpv4(addr);
  if (base % 2 ** (32 - prefix) !== 0) throw new AgentError('ERR_INVALID_ARGUMENT', `node network "${cidr}" has host bits set`);
  return { base, prefix };
}

/** Whether IPv4 `ip` lies in `cidr` (false when either is not IPv4). */
export const inCidr = inIpv4Cidr;

/** The host's address on the node network: the first address of the CIDR. */
export function nodeNetworkHostAddress(cidr: string): string {
  return formatIpv4(parseNodeNetworkCidr(cidr).base + 1);
}

/** The lowest address of `cidr` after the host's that is not in `used`; ERR_FAILED_PRECONDITION when full. */
export function pickNodeAddress(cidr: string, used: Iterable<string>): string {
  const { base, prefix } = parseNodeNetworkCidr(cidr);
  const taken = new Set(used);
  for (let n = base + 2; n < base + 2 ** (32 - prefix) - 1; n++) {
    if (!taken.has(formatIpv4(n))) return formatIpv4(n);
  }
  throw new AgentError('ERR_FAILED_PRECONDITION', `node network ${cidr} has no free address left`);
}

/** Runs `ip [-n netns] <args>`; its stdout, or ERR_INTERNAL carrying its stderr. */
export async function ip(args: readonly string[], o: { netns?: string; signal?: AbortSignal } = {}): Promise<string> {
  const argv = [...(o.netns ? ['-n', o.netns] : []), ...args];
  const r = await run('ip', argv, { signal: o.signal, timeoutMs: 10_000 });
  if (r.code !== 0) throw new AgentError('ERR_INTERNAL', `ip ${argv.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

interface IpAddrJson {
  ifname: string;
  addr_info?: Array<{ family: string; local: string; prefixlen: number }>;
}

/** `{ ifname, local, prefixlen }` of every IPv4 address of the host (or of namespace `netns`). */
export async function ipv4Addresses(o: { netns?: string; signal?: AbortSignal } = {}): Promise<Array<{ ifname: string; local: string; prefixlen: number }>> {
  const doc = JSON.parse((await ip(['-j', '-4', 'addr', 'show'], o)) || '[]') as IpAddrJson[];
  return doc.flatMap((i) => (i.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => ({ ifname: i.ifname, local: a.local, prefixlen: a.prefixlen })));
}

/** The names of the namespaces `ip netns add` made (`nodelet-*` only when `prefix` is given). */
export async function listNetns(o: { prefix?: string; signal?: AbortSignal } = {}): Promise<string[]> {
  const doc = JSON.parse((await ip(['-j', 'netns', 'list'], o)) || '[]') as Array<{ name: string }>;
  return doc.map((n) => n.name).filter((n) => !o.prefix || n.startsWith(o.prefix));
}

/**
 * Creates the node-network bridge with the host address, or checks the existing one. Refuses a
 * CIDR that overlaps an address another interface of this machine holds: the lab must not shadow
 * a real network. Idempotent.
 */
export async function ensureNodeNetworkBridge(net: NodeNetwork, signal?: AbortSignal): Promise<string> {
  const host = nodeNetworkHostAddress(net.cidr);
  const { prefix } = parseNodeNetworkCidr(net.cidr);
  const clash = (await ipv4Addresses({ signal })).find((a) => a.ifname !== net.bridge && (inCidr(a.local, net.cidr) || inCidr(host, `${a.local}/${a.prefixlen}`)));
  if (clash) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `node network ${net.cidr} overlaps ${clash.local}/${clash.prefixlen} on ${clash.ifname}: pick another range`);
  }
  if (!existsSync(`/sys/class/net/${net.bridge}`)) {
    await ip(['link', 'add', net.bridge, 'type', 'bridge'], { signal });
  } else if (!existsSync(`/sys/class/net/${net.bridge}/bridge`)) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `"${net.bridge}" exists and is not a bridge`);
  }
  await ip(['addr', 'replace', `${host}/${prefix}`, 'dev', net.bridge], { signal });
  await ip(['link', 'set', net.bridge, 'up'], { signal });
  return host;
}

/** Deletes the node-network bridge (the kernel drops the routes through it). Idempotent. */
export async function deleteNodeNetworkBridge(net: NodeNetwork, signal?: AbortSignal): Promise<void> {
  // Only a bridge: `up` refused an interface of that name that is something else.
  if (existsSync(`/sys/class/net/${net.bridge}/bridge`)) await ip(['link', 'delete', net.bridge], { signal });
}

/**
 * The node network the API server listens on: the host bridge holding `serverHost`, with its
 * prefix. A netns node dials the server there, so this is how `labAddNode` finds the network
 * without being told twice. ERR_FAILED_PRECONDITION when the server is not on a bridge (e.g. it
 * listens on 127.0.0.1, the lab default).
 */
export async function findNodeNetwork(serverHost: string, signal?: AbortSignal): Promise<NodeNetwork> {
  const hint = 'a node in its own network namespace needs the lab\'s node network: start the lab with a node network (labUp({ nodeNetwork }), `nodelet lab up --node-network <cidr>`)';
  const a = (await ipv4Addresses({ signal })).find((x) => x.local === serverHost);
  if (!a || serverHost.startsWith('127.') || !existsSync(`/sys/class/net/${a.ifname}/bridge`)) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `the API server listens on ${serverHost}, not on a node-network bridge of this machine; ${hint}`);
  }
  const size = 2 ** (32 - a.prefixlen);
  const cidr = `${formatIpv4(Math.floor(parseIpv4(a.local) / size) * size)}/${a.prefixlen}`;
  if (nodeNetworkHostAddress(cidr) !== serverHost) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `the API server listens on ${serverHost}, which is not the first address of ${cidr}; ${hint}`);
  }
  return { bridge: a.ifname, cidr };
}

export interface NodeNetns {
  netns: string;
  /** The node's address on the node network, or behind the router on its own subnet (its InternalIP). */
  ip: string;
}

/**
 * The router namespace in front of a node placed `behindRouter` (`nodelet-<node>_router`: node
 * names have no `_`, so no node's own namespace can be called that).
 */
export function routerNetnsName(node: string): string {
  return `${netnsName(node)}_router`;
}

/**
 * Plugs lab node `node` into `net` in its own namespace `nodelet-<node>`: a veth pair (host end
 * on the bridge, `eth0` inside with the node's address), loopback up, forwarding on (the
 * namespace routes for its pods). A namespace that already exists keeps its address (a restarted
 * node); otherwise `ip`, or the lowest address no other node-network namespace holds. A failed
 * step removes what this call created. Not safe to run for two new nodes at once.
 *
 * With `behindRouter` (an IPv4 CIDR, /16 to /29, overlapping nothing of this machine's) the node
 * is a machine on another subnet: a router namespace `routerNetnsName(node)` is plugged into the
 * bridge instead (an address of the node network on its `eth0`, forwarding on) and holds the
 * subnet's first address on `eth1`, whose peer is the node's `eth0` (the subnet's second address
 * unless `ip`). The node's default route and the host's route to the subnet go through the
 * router: the only routes the lab adds, the ones two machines on two LANs need to reach each
 * other; no node shares a link with another, so the agents reach each other's pods over VXLAN.
 */
export async function ensureNodeNetns(o: { node: string; network: NodeNetwork; ip?: string; behindRouter?: string; signal?: AbortSignal }): Promise<NodeNetns> {
  const netns = netnsName(o.node);
  const veth = vethName(o.node);
  const router = o.behindRouter ? routerNetnsName(o.node) : undefined;
  // The subnet of the node's eth0, and the address there that is not the node's (host or router).
  const link = o.behindRouter ?? o.network.cidr;
  const { prefix } = parseNodeNetworkCidr(link);
  const signal = o.signal;
  const existing = await listNetns({ signal });
  if (existing.includes(netns)) {
    const have = (await ipv4Addresses({ netns, signal })).find((a) => a.ifname === 'eth0' && inCidr(a.local, link));
    if (!have || (router && !existing.includes(router))) throw new AgentError('ERR_FAILED_PRECONDITION', `network namespace "${netns}" exists without an address of ${link} on eth0${router ? ` or without its router ${router}` : ''}: remove the node first (labRemoveNode)`);
    if (o.ip && o.ip !== have.local) throw new AgentError('ERR_FAILED_PRECONDITION', `node "${o.node}" already has address ${have.local}, not ${o.ip}`);
    if (router) await routeToRouter(o.node, o.network, link, signal);
    else await plugIntoBridge(veth, o.network.bridge, signal);
    return { netns, ip: have.local };
  }
  const mine = await ipv4Addresses({ signal });
  const used = mine.map((a) => a.local);
  for (const ns of await listNetns({ prefix: 'nodelet-', signal })) used.push(...(await ipv4Addresses({ netns: ns, signal }).catch(() => [])).map((a) => a.local));
  if (o.behindRouter) {
    const clash = mine.find((a) => inCidr(a.local, link) || inCidr(nodeNetworkHostAddress(link), `${a.local}/${a.prefixlen}`));
    if (clash) throw new AgentError('ERR_FAILED_PRECONDITION', `subnet ${link} overlaps ${clash.local}/${clash.prefixlen} on ${clash.ifname}: pick another range`);
  }
  const addr = o.ip ?? (o.behindRouter ? formatIpv4(parseNodeNetworkCidr(link).base + 2) : pickNodeAddress(o.network.cidr, used));
  if (!inCidr(addr, link) || addr === nodeNetworkHostAddress(link)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `node address ${addr} is not a node address of ${link}`);
  }
  if (used.includes(addr)) throw new AgentError('ERR_ALREADY_EXISTS', `address ${addr} is already in use`);
  try {
    await ip(['netns', 'add', netns], { signal });
    if (router) {
      // The router: eth0 on the node network (an address as a node's), eth1 the subnet's gateway.
      const up = pickNodeAddress(o.network.cidr, used);
      await ip(['netns', 'add', router], { signal });
      await ip(['link', 'add', vethName(router), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', router], { signal });
      await plugIntoBridge(vethName(router), o.network.bridge, signal);
      await ip(['addr', 'add', `${up}/${parseNodeNetworkCidr(o.network.cidr).prefix}`, 'dev', 'eth0'], { netns: router, signal });
      await ip(['link', 'add', 'eth1', 'netns', router, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns], { signal });
      await ip(['addr', 'add', `${nodeNetworkHostAddress(link)}/${prefix}`, 'dev', 'eth1'], { netns: router, signal });
      for (const dev of ['eth0', 'eth1', 'lo']) await ip(['link', 'set', dev, 'up'], { netns: router, signal });
      await sysctl(router, ['net.ipv4.ip_forward=1'], signal);
    } else {
      await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns], { signal });
      await plugIntoBridge(veth, o.network.bridge, signal);
    }
    await ip(['addr', 'add', `${addr}/${prefix}`, 'dev', 'eth0'], { netns, signal });
    await ip(['link', 'set', 'eth0', 'up'], { netns, signal });
    await ip(['link', 'set', 'lo', 'up'], { netns, signal });
    if (router) {
      await ip(['route', 'add', 'default', 'via', nodeNetworkHostAddress(link)], { netns, signal });
      await routeToRouter(o.node, o.network, link, signal);
    }
    // Forwarding is per namespace: the node routes between its pods and the node network.
    // bridge-nf-call-iptables (present when br_netfilter is loaded) lets the proxy see pod-to-pod
    // Service traffic on the node's own bridge, as on the host.
    await sysctl(netns, ['net.ipv4.ip_forward=1', ...(existsSync('/proc/sys/net/bridge/bridge-nf-call-iptables') ? ['net.bridge.bridge-nf-call-iptables=1'] : [])], signal);
  } catch (err) {
    await deleteNodeNetns(o.node, AbortSignal.timeout(30_000)).catch(() => undefined); // undo on failure: the original error is rethrown below
    throw err;
  }
  return { netns, ip: addr };
}

async function sysctl(netns: string, settings: string[], signal?: AbortSignal): Promise<void> {
  const r = await run(netnsExec(netns)[0]!, [...netnsExec(netns).slice(1), 'sysctl', '-qw', ...settings], { signal, timeoutMs: 10_000 });
  if (r.code !== 0) throw new AgentError('ERR_INTERNAL', `sysctl in ${netns} failed: ${r.stderr.trim()}`);
}

/** (Re)plugs node `node`'s router into the bridge and routes `subnet` through it on the host. */
async function routeToRouter(node: string, network: NodeNetwork, subnet: string, signal?: AbortSignal): Promise<void> {
  await plugIntoBridge(vethName(routerNetnsName(node)), network.bridge, signal);
  const via = (await ipv4Addresses({ netns: routerNetnsName(node), signal })).find((a) => a.ifname === 'eth0' && inCidr(a.local, network.cidr));
  if (!via) throw new AgentError('ERR_FAILED_PRECONDITION', `router ${routerNetnsName(node)} has no address of ${network.cidr} on eth0: remove the node first (labRemoveNode)`);
  await ip(['route', 'replace', subnet, 'via', via.local, 'dev', network.bridge], { signal });
}

/**
 * Attaches the host end of a node's veth to the node-network bridge, with hairpin on: a packet
 * from a node that the host DNATs (a NodePort of node 1) to a pod behind that same node goes
 * back out of the port it came in on, and with br_netfilter such a packet is bridged there, which
 * a bridge port only does in hairpin mode (the pod bridges have `hairpinMode` for the same reason).
 */
async function plugIntoBridge(veth: string, bridge: string, signal?: AbortSignal): Promise<void> {
  await ip(['link', 'set', veth, 'master', bridge, 'up'], { signal });
  await ip(['link', 'set', veth, 'type', 'bridge_slave', 'hairpin', 'on'], { signal });
}

/**
 * Deletes node `node`'s veth and namespace (its pod bridge, proxy table and routes go with it),
 * then its router namespace if it has one, with the host's route through it. Call it after the
 * node's processes are stopped: a process still inside keeps the namespace alive after its name
 * is gone, so those are reported (by PID), not killed. Idempotent.
 */
export async function deleteNodeNetns(node: string, signal?: AbortSignal): Promise<string[]> {
  const problems: string[] = [];
  const existing = await listNetns({ signal });
  for (const netns of [netnsName(node), routerNetnsName(node)]) {
    const veth = vethName(netns === netnsName(node) ? node : netns);
    if (existsSync(`/sys/class/net/${veth}`)) await ip(['link', 'delete', veth], { signal }).catch((e: Error) => problems.push(e.message));
    if (!existing.includes(netns)) continue;
    if (netns === routerNetnsName(node)) problems.push(...(await deleteRouteToRouter(node, signal)));
    const pids = (await ip(['netns', 'pids', netns], { signal }).catch(() => '')).trim();
    if (pids) problems.push(`processes still in network namespace ${netns}: ${pids.split('\n').join(', ')}`);
    await ip(['netns', 'delete', netns], { signal }).catch((e: Error) => problems.push(e.message));
  }
  return problems;
}

/** Deletes the host's route to the subnet behind node `node`'s router (the one `routeToRouter` added), if it is there. */
async function deleteRouteToRouter(node: string, signal?: AbortSignal): Promise<string[]> {
  const addrs = await ipv4Addresses({ netns: routerNetnsName(node), signal }).catch(() => []);
  const up = addrs.find((a) => a.ifname === 'eth0');
  const down = addrs.find((a) => a.ifname === 'eth1');
  if (!up || !down) return [];
  const size = 2 ** (32 - down.prefixlen);
  const subnet = `${formatIpv4(Math.floor(parseIpv4(down.local) / size) * size)}/${down.prefixlen}`;
  const routes = JSON.parse((await ip(['-j', '-4', 'route', 'show', subnet, 'via', up.local], { signal }).catch(() => '')) || '[]') as unknown[];
  if (!routes.length) return [];
  return ip(['route', 'delete', subnet, 'via', up.local], { signal }).then(() => [], (e: Error) => [e.message]);
}
