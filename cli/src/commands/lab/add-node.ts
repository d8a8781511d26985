/**
 * A further node of a lab cluster on the same machine (multi-node tests): its own lab containerd
 * (root, state, socket), CNI dirs, bridge, node API/healthz ports and agent, all under its own
 * state dir, joined to the server `labUp` started with a fresh bootstrap token.
 *
 * Two ways to place it (docs/multi-node-lab.md):
 * - shared (default): in the host's network namespace beside the first node; distinct bridges and
 *   per-node pod CIDRs keep the pod networks apart; one proxy per namespace, so its proxy is off.
 * - `netns: true`: a machine of its own in namespace `nodelet-<node>` on the lab's node network
 *   (node-network.ts), with its own node IP, proxy table and DNS resolver; the agents route the
 *   pod networks between the nodes themselves (docs/network.md), the lab adds no route.
 *
 *   add:    [netns + veth (and router namespace with behindRouter)] ─▶ containerd (lab runtime) ─▶ startLabAgent (token, join, agent, Ready)
 *   remove: drain (cordon, evict its pods; drain.ts) ─▶ labDown on the node's state dir (CRI
 *           removal of sandboxes while the agent serves CNI DEL ─▶ agent ─▶ containerd ─▶ bridge
 *           or namespace ─▶ state) ─▶ delete the Node (the other agents drop their routes to it);
 *           there is no server to stop.
 *
 * A failed add (the agent exited, or no Ready in time) is removed the same way, state dir included:
 * the error carries the agent log's last lines.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { AgentError, describeError } from '@nodelet/base';
import { ApiClient, loadKubeconfig } from '@nodelet/api';
import { labRuntimeUp } from '@nodelet/lab-runtime';
import { defaultLabOptions, labDown, labPaths, startLabAgent, type LabDownResult, type LabOptions } from './cluster.js';
import { ensureNodeNetns, findNodeNetwork, netnsName, type NodeNetwork } from './node-network.js';
import { deleteNode, drainNode } from './drain.js';
import { runningPid } from './processes.js';

export interface LabNodeOptions {
  /** The node's own state dir (not the first node's). */
  stateDir: string;
  /** The admin kubeconfig `labUp` returned. */
  adminKubeconfig: string;
  /**
   * `host:port` of the server's registry (containerd pulls the pause and busybox images there);
   * default port 5000 on the address the API server listens on, as `labUp` places it.
   */
  registry?: string;
  nodeName: string;
  bridge: string;
  /** Default: a port free on this machine now (the first node has 10250). */
  nodeApiPort?: number;
  /** Default: a port free on this machine now (the first node has 10248). */
  healthzPort?: number;
  /** The lab's cluster CIDR (default labUp's); the proxy masquerades Service traffic from outside it. */
  clusterCidr?: string;
  /**
   * Run the node in its own network namespace on the lab's node network (the one the API server
   * listens on: start the lab with `nodeNetwork`). Default false: share the host's.
   */
  netns?: boolean;
  /** With `netns`: the node's address on the node network (default: the lowest free one), or with `behindRouter` on that subnet. */
  nodeIp?: string;
  /**
   * With `netns`: an IPv4 CIDR (/16 to /29) of a subnet of the node's own, reached from the node
   * network through a router namespace (node-network.ts), so the node shares no link with any
   * other and the agents reach its pods over VXLAN (docs/multi-node-lab.md).
   */
  behindRouter?: string;
  /** With `netns`: the agent's pod network backend (LabOptions `podNetwork`); a node sharing the host's namespace routes nothing. */
  podNetwork?: LabOptions['podNetwork'];
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface LabNode {
  nodeName: string;
  runtimeEndpoint: string;
  /** With `netns`: the node's network namespace and its address there (its InternalIP). */
  netns?: string;
  ip?: string;
  /** The options to pass to `labRemoveNode`. */
  options: LabNodeOptions;
}

/**
 * A TCP port nothing on this machine listens on now, for an agent started next: the kernel picks
 * it on the wildcard address the agent's node API binds.
 */
function freeHostPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

function asLabOptions(n: LabNodeOptions & { nodeApiPort: number; healthzPort: number }, nodeIp?: string): LabOptions {
  return defaultLabOptions({
    stateDir: n.stateDir, registry: n.registry, nodeName: n.nodeName, bridge: n.bridge,
    nodeApiPort: n.nodeApiPort, healthzPort: n.healthzPort, readyTimeoutMs: n.readyTimeoutMs, log: n.log,
    ...(n.clusterCidr ? { clusterCidr: n.clusterCidr } : {}),
    // One service proxy, DNS resolver and pod route manager per network namespace: the first
    // node's serve the host they share (its resolver holds <host IP>:53, which this agent could
    // not bind; its route manager owns the host's routes, VXLAN device and masquerade chain).
    proxyMode: n.netns ? 'nftables' : 'none',
    ...(n.netns ? {} : { agentConfig: { clusterDNSResolver: false, podNetwork: { backend: 'none' } } }),
    ...(n.netns ? { netns: true } : {}),
    ...(n.netns && n.podNetwork ? { podNetwork: n.podNetwork } : {}),
    ...(nodeIp ? { nodeIp } : {}),
  });
}

export async function labAddNode(opts: LabNodeOptions): Promise<LabNode> {
  const n = { ...opts, nodeApiPort: opts.nodeApiPort ?? (await freeHostPort()), healthzPort: opts.healthzPort ?? (await freeHostPort()) };
  const p = labPaths(resolve(n.stateDir));
  const admin = new ApiClient({ ...(await loadKubeconfig(n.adminKubeconfig)), timeoutMs: 10_000 });
  const registry = n.registry ?? `${new URL(admin.server).hostname}:5000`;
  if (n.netns && /^(127\.|localhost:|\[::1\])/.test(registry)) {
    admin.close();
    throw new AgentError('ERR_INVALID_ARGUMENT', `registry "${registry}" is a loopback address, which a node in its own network namespace cannot reach: use the lab's registry on the node network`);
  }
  if ((n.behindRouter || n.podNetwork) && !n.netns) {
    admin.close();
    throw new AgentError('ERR_INVALID_ARGUMENT', `${n.behindRouter ? 'behindRouter' : 'podNetwork'} is for a node in its own network namespace: it needs netns (a node sharing the host's routes nothing)`);
  }
  try {
    let placed: { network: NodeNetwork; netns: string; ip: string } | undefined;
    if (n.netns) {
      const network = await findNodeNetwork(new URL(admin.server).hostname);
      n.log?.(`creating network namespace ${netnsName(n.nodeName)} ${n.behindRouter ? `on subnet ${n.behindRouter} behind a router on` : 'on'} node network ${network.cidr}…`);
      placed = { network, ...(await ensureNodeNetns({ node: n.nodeName, network, ...(n.nodeIp ? { ip: n.nodeIp } : {}), ...(n.behindRouter ? { behindRouter: n.behindRouter } : {}) })) };
    }
    const o = asLabOptions({ ...n, registry }, placed?.ip);
    mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
    for (const d of [p.cniBin, p.cniConf, p.cniCache, p.ipam, p.agentRoot]) mkdirSync(d, { recursive: true });
    o.log?.(`starting containerd for node "${o.nodeName}"…`);
    const rt = await labRuntimeUp({ dir: p.containerd, registry: o.registry, cniBinDir: p.cniBin, cniConfDir: p.cniConf, ...(placed ? { netns: placed.netns } : {}) });
    await startLabAgent(o, n.adminKubeconfig, admin, rt.endpoint);
    return { nodeName: o.nodeName, runtimeEndpoint: rt.endpoint, ...(placed ? { netns: placed.netns, ip: placed.ip } : {}), options: n };
  } catch (err) {
    n.log?.(`node "${n.nodeName}" did not come up; removing what was started (state dir ${n.stateDir} included)…`);
    await labRemoveNode(n).catch(() => undefined); // undo on failure: the original error is rethrown below
    throw err;
  } finally {
    admin.close();
  }
}

/**
 * Stops the node's agent and containerd, deletes its bridge or its network namespace, (unless
 * keepState) its state dir, and its Node object, which makes the other nodes' agents delete
 * their routes to it.
 */
export async function labRemoveNode(n: LabNodeOptions, o: { keepState?: boolean; drainTimeoutMs?: number } = {}): Promise<LabDownResult> {
  const admin = new ApiClient({ ...(await loadKubeconfig(n.adminKubeconfig)), timeoutMs: 10_000 });
  const problems: string[] = [];
  try {
    // Before the agent stops, so its pods end as pods do and their controllers re-create them
    // elsewhere. Without a running agent nothing would finish them: deleting the Node below
    // lets the pod garbage collector remove them instead.
    const dir = resolve(n.stateDir);
    if ((await runningPid(labPaths(dir).agentProc, dir)) !== undefined) {
      n.log?.(`draining node "${n.nodeName}" (cordon, evict its pods)…`);
      const evicted = await drainNode(admin, n.nodeName, o.drainTimeoutMs ?? 60_000).catch((e: unknown) => void problems.push(`drain: ${describeError(e)}`));
      if (evicted) n.log?.(`evicted ${evicted} pod(s)`);
    }
    const r = await labDown({ ...asLabOptions({ ...n, nodeApiPort: n.nodeApiPort ?? 0, healthzPort: n.healthzPort ?? 0 }), keepState: o.keepState });
    // Last: a deleted Node with its agent still running would be registered again by the agent.
    if (await deleteNode(admin, n.nodeName).catch((e: unknown) => void problems.push(`node: ${describeError(e)}`))) r.stopped.push(`node object ${n.nodeName}`);
    r.problems.unshift(...problems);
    return r;
  } finally {
    admin.close();
  }
}
