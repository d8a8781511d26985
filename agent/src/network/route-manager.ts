/**
 * The agent's inter-node pod routing (docs/network.md): for every other node, a host-gw route or
 * a VXLAN route with its FDB and neighbour entries, kept in step with the Node objects.
 *
 *   Node informer (all nodes) ─▶ peers ─┐
 *   ip -json addr (connected subnets) ──┼─▶ planPeers ─▶ diffPlan(actual) ─▶ ip / bridge
 *   ip -json route proto 150, bridge -json fdb, ip -json neigh (actual) ─┘
 *
 * Pod traffic leaving the cluster CIDR is masqueraded from its own nftables table (MASQ_TABLE),
 * written once per agent run in one atomic transaction.
 *
 * Everything it writes is its own and recognisable after a restart: routes carry ROUTE_PROTO and
 * lead into its cluster CIDR (routes of that protocol into other ranges are another cluster's
 * agent's and never read as its own), FDB and neighbour entries live on its own VXLAN device
 * (one per VNI). A restarted agent adopts the device (its MAC,
 * and so every peer's FDB entry, stays valid) and deletes only what no node claims, so
 * established connections across nodes survive it.
 */
import type { Disposable, Logger } from '@nodelet/base';
import type { Informer, Node } from '@nodelet/api/agent';
import type { CommandRunner } from '../proxy/exec.js';
import { cidrWithin, ROUTE_PROTO, VXLAN_DEFAULTS, diffPlan, masqueradeScript, planPeers, podGateway, VXLAN_ANNOTATION, type Peer, type PodNetworkBackend, type RoutePlan } from './route-plan.js';

export interface VxlanOptions {
  vni: number;
  port: number;
  device: string;
}

export interface RouteManagerOptions {
  backend: PodNetworkBackend;
  runner: CommandRunner;
  nodeName: string;
  /** This node's InternalIP: the VXLAN tunnel's local end. */
  nodeIP: string;
  vxlan: VxlanOptions;
  log: Logger;
  /** Publishes this node's VTEP on its Node object (the VXLAN_ANNOTATION value). */
  publishVtep?: (value: string) => Promise<void>;
  /**
   * The pods' range: their traffic to outside it is masqueraded (masqueradeScript), and the
   * manager routes to, and deletes routes into, pod CIDRs inside it only (route-plan.ts).
   */
  clusterCIDR: string;
  /** Retry delay after a failed sync. Default 5 s. */
  retryMs?: number;
  /** Period of the full pass that repairs drift. Default 60 s. */
  resyncMs?: number;
}

interface LinkJson { ifname: string; address?: string; mtu?: number; linkinfo?: { info_kind?: string; info_data?: { id?: number; port?: number; local?: string } } }
interface AddrJson { ifname: string; mtu?: number; addr_info?: Array<{ family?: string; local?: string; prefixlen?: number }> }

/** Peers from Node objects: every node but `self`, with InternalIP, pod CIDR and published VTEP. */
export function peersFromNodes(nodes: readonly Node[], self: string): Peer[] {
  const out: Peer[] = [];
  for (const n of nodes) {
    const name = n.metadata?.name ?? '';
    if (!name || name === self || n.metadata?.deletionTimestamp) continue;
    const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP' && !a.address.includes(':'))?.address;
    const podCIDR = [n.spec?.podCIDR, ...(n.spec?.podCIDRs ?? [])].find((c): c is string => !!c && !c.includes(':'));
    if (!ip || !podCIDR) continue;
    out.push({ name, ip, podCIDR, ...vtepOf(n) });
  }
  return out;
}

function vtepOf(n: Node): { vtepMAC?: string } {
  const raw = n.metadata?.annotations?.[VXLAN_ANNOTATION];
  if (!raw) return {};
  try {
    const doc = JSON.parse(raw) as { vtepMAC?: unknown };
    return typeof doc.vtepMAC === 'string' && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(doc.vtepMAC) ? { vtepMAC: doc.vtepMAC } : {};
  } catch {
    return {};
  }
}

/**
 * The MTU left for pods behind VXLAN: the MTU of the link holding `nodeIP` minus `overhead`;
 * undefined when no link holds it.
 */
export async function uplinkMtu(runner: CommandRunner, nodeIP: string, overhead: number, signal = AbortSignal.timeout(10_000)): Promise<number | undefined> {
  const r = await runner.run(['ip', '-json', '-4', 'addr', 'show'], { signal });
  if (r.code !== 0) throw new Error(`"ip -json -4 addr show" failed (exit ${r.code}): ${r.stderr.trim()}`);
  const up = (JSON.parse(r.stdout || '[]') as AddrJson[]).find((l) => (l.addr_info ?? []).some((a) => a.local === nodeIP));
  return up?.mtu ? up.mtu - overhead : undefined;
}

export class RouteManager {
  readonly #o: RouteManagerOptions;
  #running?: Promise<void>;
  #again = false;
  #nodes: readonly Node[] = [];
  #timer?: NodeJS.Timeout;
  #published?: string;
  #masqueraded = false;
  #passes = 0;
  #lastKey?: string;
  #closed = false;
  readonly #abort = new AbortController();

  constructor(o: RouteManagerOptions) {
    this.#o = o;
  }

  /** Follows `informer` (all Nodes): every change re-syncs. Returns what to dispose. */
  watch(informer: Informer<Node>): Disposable {
    // Not before the first full list: a pass over the nodes listed so far would delete the
    // routes of the rest (a restarted agent would cut connections it is meant to keep).
    const on = (): void => {
      if (informer.hasSynced()) this.update(informer.list());
    };
    const sub = informer.on({ onAdd: on, onUpdate: on, onDelete: on });
    informer.start();
    informer.waitForSync(this.#abort.signal).then(on, () => undefined);
    return sub;
  }

  /**
   * Takes a new set of Nodes; syncs now, or right after the sync under way. A set that routes
   * the same as the last synced one (a status heartbeat) waits for the periodic pass, which also
   * repairs what someone else changed (`resyncMs`, default 60 s).
   */
  update(nodes: readonly Node[], force = false): void {
    this.#nodes = nodes;
    if (this.#closed) return;
    if (!force && this.#lastKey !== undefined && this.#lastKey === this.#key(nodes)) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    const key = this.#key(nodes);
    clearTimeout(this.#timer);
    this.#running = this.sync(nodes)
      .then(() => {
        this.#lastKey = key;
        this.#schedule(this.#o.resyncMs ?? 60_000);
      }, (e: unknown) => {
        if (this.#closed) return;
        this.#lastKey = undefined;
        this.#o.log.warn({ err: e }, 'Pod route sync failed; retrying');
        this.#schedule(this.#o.retryMs ?? 5000);
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.update(this.#nodes);
        }
      });
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.update(this.#nodes, true), ms);
    this.#timer.unref();
  }

  /** What a pass depends on: the peers, and this node's pod CIDR and published VTEP. */
  #key(nodes: readonly Node[]): string {
    const self = nodes.find((n) => n.metadata?.name === this.#o.nodeName);
    return JSON.stringify([peersFromNodes(nodes, this.#o.nodeName), self?.spec?.podCIDR, self?.metadata?.annotations?.[VXLAN_ANNOTATION]]);
  }

  /** Passes completed without error. */
  get passes(): number {
    return this.#passes;
  }

  /** Whether a sync is neither running nor queued (tests wait on it). */
  idle(): boolean {
    return !this.#running && !this.#again;
  }

  /** One pass: the VXLAN device (when this node has a pod CIDR), then routes, FDB and neighbours. Throws on failure. */
  async sync(nodes: readonly Node[]): Promise<{ commands: number }> {
    const { backend, vxlan } = this.#o;
    const self = nodes.find((n) => n.metadata?.name === this.#o.nodeName);
    const selfCIDR = self?.spec?.podCIDR;
    let device = false;
    if (backend !== 'none' && selfCIDR && !selfCIDR.includes(':')) {
      const mac = await this.#ensureDevice(selfCIDR);
      device = true;
      const value = JSON.stringify({ vni: vxlan.vni, vtepMAC: mac });
      const onNode = self.metadata?.annotations?.[VXLAN_ANNOTATION];
      if (this.#o.publishVtep && onNode !== value && this.#published !== value) {
        await this.#o.publishVtep(value);
        this.#published = value;
      }
    }
    const { connected, own } = await this.localAddresses();
    const desired = planPeers({ backend, peers: peersFromNodes(nodes, this.#o.nodeName), connected, own, clusterCIDR: this.#o.clusterCIDR, vxlanDevice: vxlan.device });
    const actual = await this.actual(device);
    const cmds = diffPlan(desired, actual, vxlan.device);
    for (const c of cmds) await this.#exec(c);
    // After the routes: a node without nft still gets them (the pass fails, and retries this).
    if (backend !== 'none' && !this.#masqueraded) {
      const r = await this.#o.runner.run(['nft', '-f', '-'], { input: masqueradeScript(this.#o.clusterCIDR), signal: this.#abort.signal });
      if (r.code !== 0) throw new Error(`writing the masquerade table failed (exit ${r.code}): ${r.stderr.trim()}`);
      this.#masqueraded = true;
    }
    this.#passes++;
    if (cmds.length) this.#o.log.info({ commands: cmds.length, routes: desired.routes.length }, 'Pod routes synced');
    return { commands: cmds.length };
  }

  /**
   * This node's own IPv4 addresses (`own`), and their subnets but for loopback, the VXLAN device
   * and host routes (/32) (`connected`).
   */
  async localAddresses(): Promise<{ connected: string[]; own: string[] }> {
    const links = JSON.parse((await this.#exec(['ip', '-json', '-4', 'addr', 'show'])) || '[]') as AddrJson[];
    const own = links.flatMap((l) => (l.addr_info ?? []).flatMap((a) => (a.local ? [a.local] : [])));
    const connected = links
      .filter((l) => l.ifname !== 'lo' && l.ifname !== this.#o.vxlan.device)
      .flatMap((l) => (l.addr_info ?? []).filter((a) => a.local && a.prefixlen !== undefined && a.prefixlen < 32).map((a) => `${a.local}/${a.prefixlen}`));
    return { connected, own };
  }

  /**
   * What the agent holds now: its routes (ROUTE_PROTO, destination inside the cluster CIDR), and
   * the VXLAN device's FDB and permanent neighbour entries.
   */
  async actual(device: boolean): Promise<RoutePlan> {
    const dev = this.#o.vxlan.device;
    const routes = JSON.parse((await this.#exec(['ip', '-json', '-4', 'route', 'show', 'proto', String(ROUTE_PROTO)])) || '[]') as Array<{ dst: string; gateway?: string; dev?: string }>;
    const plan: RoutePlan = {
      routes: routes.filter((r) => r.gateway && cidrWithin(r.dst, this.#o.clusterCIDR)).map((r) => ({ dst: r.dst, via: r.gateway!, ...(r.dev === dev ? { dev } : {}) })),
      fdb: [],
      neigh: [],
    };
    if (!device && !(await this.#link())) return plan;
    const fdb = JSON.parse((await this.#exec(['bridge', '-json', 'fdb', 'show', 'dev', dev])) || '[]') as Array<{ mac: string; dst?: string }>;
    plan.fdb = fdb.filter((f) => f.dst && f.mac !== '00:00:00:00:00:00').map((f) => ({ mac: f.mac.toLowerCase(), dst: f.dst! }));
    const neigh = JSON.parse((await this.#exec(['ip', '-json', '-4', 'neigh', 'show', 'dev', dev, 'nud', 'permanent'])) || '[]') as Array<{ dst: string; lladdr?: string }>;
    plan.neigh = neigh.filter((n) => n.lladdr).map((n) => ({ ip: n.dst, mac: n.lladdr!.toLowerCase() }));
    return plan;
  }

  /** Stops syncing; what it programmed stays (a restart adopts it). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
  }

  async #link(): Promise<LinkJson | undefined> {
    const r = await this.#o.runner.run(['ip', '-json', '-details', 'link', 'show', 'dev', this.#o.vxlan.device], { signal: this.#abort.signal });
    if (r.code !== 0) return undefined;
    return (JSON.parse(r.stdout || '[]') as LinkJson[])[0];
  }

  /** Adopts the VXLAN device when its VNI, port and local address match, else (re)creates it. Returns its MAC. */
  async #ensureDevice(selfCIDR: string): Promise<string> {
    const { device, vni, port } = this.#o.vxlan;
    let link = await this.#link();
    const d = link?.linkinfo?.info_data;
    if (link && (link.linkinfo?.info_kind !== 'vxlan' || d?.id !== vni || d?.port !== port || d?.local !== this.#o.nodeIP)) {
      this.#o.log.info({ device }, 'Recreating the VXLAN device (settings changed)');
      await this.#exec(['ip', 'link', 'delete', device]);
      link = undefined;
    }
    if (!link) {
      await this.#exec(['ip', 'link', 'add', device, 'type', 'vxlan', 'id', String(vni), 'local', this.#o.nodeIP, 'dstport', String(port), 'nolearning']);
      const mtu = await uplinkMtu(this.#o.runner, this.#o.nodeIP, VXLAN_DEFAULTS.overhead);
      if (mtu) await this.#exec(['ip', 'link', 'set', device, 'mtu', String(mtu)]);
      link = await this.#link();
    }
    await this.#exec(['ip', 'link', 'set', device, 'up']);
    await this.#exec(['ip', 'addr', 'replace', `${podGateway(selfCIDR)}/32`, 'dev', device]);
    if (!link?.address) throw new Error(`VXLAN device ${device} has no MAC address`);
    return link.address.toLowerCase();
  }

  async #exec(argv: readonly string[]): Promise<string> {
    const r = await this.#o.runner.run(argv, { signal: this.#abort.signal });
    if (r.code !== 0) throw new Error(`"${argv.join(' ')}" failed (exit ${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  }
}
