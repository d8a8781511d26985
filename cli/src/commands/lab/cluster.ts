/**
 * The one-machine lab cluster behind `make up` / `make down` (`nodelet lab up|down|status`):
 *
 *   up:   lab images ─▶ containerd (lab runtime) ─▶ nodelet server (SQLite, registry) ─▶ admin
 *         kubeconfig ─▶ bootstrap token ─▶ join (cluster CA, node credential 0600) ─▶ nodelet agent
 *         ─▶ node Ready ─▶ its serving certificate (CSR, approved by the lab as the admin)
 *         verifies against the cluster CA
 *   down: CRI stop+remove of every sandbox while the agent still serves CNI DEL (so IPs, veths and
 *         cache entries are released) ─▶ stop agent ─▶ stop server ─▶ stop containerd + sweep ─▶
 *         delete the pod bridge ─▶ remove the state dir (unless --keep-state)
 *
 * A failed `up` stops whatever it had started before reporting, so a second `up` starts clean.
 * Everything lives under one state dir; processes are stopped by their pidfile PIDs.
 *
 * With a node network (`nodeNetwork`), `up` first creates its bridge and the server, registry and
 * first node use the host's address on it, so nodes in network namespaces of their own
 * (`labAddNode({ netns: true })`) reach them; `down` deletes the bridge last (node-network.ts).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { basename, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { rmdir } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { execFileSync } from 'node:child_process';
import { stringify as toYaml } from 'yaml';
import { AgentError, cgroupPathInEveryHierarchy, describeError, hasCode, parseMountinfo, pollUntil, removeCgroupTree } from '@nodelet/base';
import { ApiClient, approveNodeServingCsrs, loadKubeconfig, NODES, type Node } from '@nodelet/api';
import { ensureLabImages, DEFAULT_LAB_IMAGE_DIR, LAB_IMAGES } from '@nodelet/oci';
import { DEFAULT_LAB_STATE_DIR, DEFAULT_REGISTRY, labLayout, labRuntimeDown, labRuntimeStatus, isAlive, labRuntimeUp, unmountUnder } from '@nodelet/lab-runtime';
import { connectCriClient } from '@nodelet/cri-client';
import { createToken } from '../ops/token.js';
import { ensureLabEncryptionConfig } from './encryption.js';
import { agentAuthentication, join as joinCluster } from '../ops/join.js';
import { logTail, managed, runningPid, startDetached, stopProcess } from './processes.js';
import { labAuditArgs } from './audit-policy.js';
import { removeProxyTable } from '../proxy.js';
import { labVxlanVni, removeHostPodNetwork } from './pod-network.js';
import { deleteNodeNetns, deleteNodeNetworkBridge, ensureNodeNetworkBridge, netnsExec, netnsName, nodeNetworkHostAddress, type NodeNetwork } from './node-network.js';

export interface LabOptions {
  stateDir: string;
  apiPort: number;
  /** `host:port` of the registry the server runs (and containerd pulls from). */
  registry: string;
  clusterCidr: string;
  nodeName: string;
  bridge: string;
  nodeApiPort: number;
  healthzPort: number;
  imagesDir: string;
  /** How long to wait for the node to become Ready. */
  readyTimeoutMs: number;
  /**
   * The agent's service proxy. One proxy per network namespace: `labAddNode` runs a node that
   * shares the host's with `none`, one in its own namespace with `nftables` (docs/multi-node-lab.md).
   */
  proxyMode?: 'nftables' | 'none';
  /**
   * `labUp` only: the lab's node network. The server and registry listen on the host's address
   * on it (so `registry` must name that address) and it is the first node's IP.
   */
  nodeNetwork?: NodeNetwork;
  /**
   * The agent's pod network backend (`podNetwork.backend`; default the agent's, host-gw, which
   * reaches a peer on no connected subnet over VXLAN: docs/network.md). `vxlan` tunnels to every
   * peer and gives the pods an MTU 50 below the node's link. The agent refuses other values.
   */
  podNetwork?: 'host-gw' | 'vxlan';
  /** The agent's `--node-ip` (default: the host address of `nodeNetwork`, else the agent's pick). */
  nodeIp?: string;
  /**
   * The node's containerd and agent run in network namespace `nodelet-<nodeName>` (made by
   * `labAddNode`); `labDown` then deletes that namespace instead of a host bridge and table.
   */
  netns?: boolean;
  /** Extra `nodelet server` flags (e.g. `--node-monitor-grace-period 20s` in tests). */
  serverArgs?: string[];
  /**
   * Extra KubeletConfiguration fields for the agent's config file, written over the lab's own
   * (e.g. `{ containerLogMaxSize: '1Mi', containerLogMonitorInterval: '1s' }` so tests see log
   * rotation in seconds). The agent validates them at start like any config file.
   */
  agentConfig?: Record<string, unknown>;
  /**
   * Where the agent looks for the real CNI plugins (`cniPluginDirs`); the agent's default when
   * unset. The soak puts its failpoint plugin first (docs/reliability.md).
   */
  cniPluginDirs?: string[];
  log?: (line: string) => void;
}

export function defaultLabOptions(o: Partial<LabOptions> = {}): LabOptions {
  const onNetwork = o.nodeNetwork ? nodeNetworkHostAddress(o.nodeNetwork.cidr) : undefined;
  const nodeIp = o.nodeIp ?? onNetwork;
  return {
    stateDir: resolve(o.stateDir ?? DEFAULT_LAB_STATE_DIR),
    apiPort: o.apiPort ?? 6443,
    registry: o.registry ?? (onNetwork ? `${onNetwork}:5000` : DEFAULT_REGISTRY),
    clusterCidr: o.clusterCidr ?? '10.244.0.0/16',
    nodeName: (o.nodeName ?? hostname()).toLowerCase(),
    bridge: o.bridge ?? 'nodelet0',
    nodeApiPort: o.nodeApiPort ?? 10250,
    healthzPort: o.healthzPort ?? 10248,
    imagesDir: o.imagesDir ?? DEFAULT_LAB_IMAGE_DIR,
    readyTimeoutMs: o.readyTimeoutMs ?? 120_000,
    serverArgs: o.serverArgs ?? [],
    ...(o.agentConfig ? { agentConfig: o.agentConfig } : {}),
    proxyMode: o.proxyMode,
    cniPluginDirs: o.cniPluginDirs,
    ...(o.nodeNetwork ? { nodeNetwork: o.nodeNetwork } : {}),
    ...(nodeIp ? { nodeIp } : {}),
    ...(o.netns ? { netns: true } : {}),
    ...(o.podNetwork ? { podNetwork: o.podNetwork } : {}),
    log: o.log,
  };
}

export function labPaths(stateDir: string) {
  const { containerd, server, agentConfig, adminKubeconfig, auditLog } = labLayout(stateDir);
  return {
    containerd,
    server,
    agentRoot: join(stateDir, 'agent'),
    agentConfig,
    agentKubeconfig: join(stateDir, 'agent.kubeconfig'),
    agentToken: join(stateDir, 'agent.token'),
    clusterCa: join(stateDir, 'ca.crt'),
    adminKubeconfig,
    /** The lab server's audit policy (written at start when absent; edit it to change what is logged). */
    auditPolicy: join(stateDir, 'audit-policy.yaml'),
    auditLog,
    cniBin: join(stateDir, 'cni', 'bin'),
    cniConf: join(stateDir, 'cni', 'net.d'),
    cniCache: join(stateDir, 'cni', 'cache'),
    ipam: join(stateDir, 'cni', 'ipam'),
    serverProc: managed(stateDir, 'server'),
    agentProc: managed(stateDir, 'agent'),
    /** The node network `up` created, for a `down` that is not told it. */
    nodeNetwork: join(stateDir, 'node-network.json'),
  };
}

export interface LabUpResult {
  kubeconfig: string;
  server: string;
  nodeName: string;
  runtimeEndpoint: string;
  images: { busybox: string; pause: string };
}

export async function labUp(opts: Partial<LabOptions> = {}): Promise<LabUpResult> {
  const o = defaultLabOptions(opts);
  const p = labPaths(o.stateDir);
  const say = o.log ?? (() => {});
  mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
  for (const d of [p.cniBin, p.cniConf, p.cniCache, p.ipam, p.agentRoot]) mkdirSync(d, { recursive: true });

  try {
    if (o.nodeNetwork) {
      const bind = nodeNetworkHostAddress(o.nodeNetwork.cidr);
      if (!o.registry.startsWith(`${bind}:`)) {
        throw new AgentError('ERR_INVALID_ARGUMENT', `with node network ${o.nodeNetwork.cidr} the registry must listen on ${bind} (nodes in their own network namespace pull from it), not "${o.registry}"`);
      }
      say(`creating the node network ${o.nodeNetwork.cidr} on bridge ${o.nodeNetwork.bridge}…`);
      writeFileSync(p.nodeNetwork, JSON.stringify(o.nodeNetwork) + '\n');
      await ensureNodeNetworkBridge(o.nodeNetwork);
    }
    say('building the offline images (pause, busybox)…');
    await ensureLabImages(o.imagesDir);

    const before = await labRuntimeStatus({ dir: p.containerd });
    say(before.running ? `containerd (lab runtime) already runs (pid ${before.pid})` : 'starting containerd (lab runtime)…');
    const rt = await labRuntimeUp({ dir: p.containerd, registry: o.registry, cniBinDir: p.cniBin, cniConfDir: p.cniConf });

    const admin = await startLabServer(o);
    await startLabAgent(o, p.adminKubeconfig, admin, rt.endpoint);
    const server = admin.server.replace(/\/$/, '');
    admin.close();
    return {
      kubeconfig: p.adminKubeconfig,
      server,
      nodeName: o.nodeName,
      runtimeEndpoint: rt.endpoint,
      images: {
        busybox: `${o.registry}/${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`,
        pause: `${o.registry}/${LAB_IMAGES.pause.name}:${LAB_IMAGES.pause.tag}`,
      },
    };
  } catch (err) {
    say('start-up failed; stopping what was started…');
    await labDown({ ...o, keepState: true }).catch(() => undefined); // undo on failure: the original error is rethrown below
    throw err;
  }
}

/**
 * Starts `nodelet server` for the lab unless it already runs, and resolves with an admin client
 * once `/readyz` answers. `labUp` runs it; the soak restarts a killed server with it.
 */
export async function startLabServer(o: LabOptions): Promise<ApiClient> {
  const p = labPaths(o.stateDir);
  const say = o.log ?? (() => {});
  // With a node network the server listens on the host's address on it (see `nodeNetwork`).
  const bind = o.nodeNetwork ? nodeNetworkHostAddress(o.nodeNetwork.cidr) : '127.0.0.1';
  const serverPid = await runningPid(p.serverProc, o.stateDir);
  if (serverPid !== undefined) say(`nodelet server already runs (pid ${serverPid})`);
  else {
    say(`starting nodelet server on :${o.apiPort} (SQLite, registry ${o.registry})…`);
    await startDetached(p.serverProc, [
      'server', '--data-dir', p.server, '--port', String(o.apiPort), '--bind-address', bind,
      '--registry-address', o.registry, '--registry-root', o.imagesDir, '--cluster-cidr', o.clusterCidr,
      ...labAuditArgs(p, o.serverArgs ?? []),
      ...(o.serverArgs?.some((a) => a.startsWith('--encryption-provider-config')) ? [] : ['--encryption-provider-config', ensureLabEncryptionConfig(p.server)]),
      ...(o.serverArgs ?? []),
    ]);
  }
  return pollUntil('the API server to answer', async () => {
    if (!existsSync(p.adminKubeconfig)) return undefined;
    const c = new ApiClient({ ...(await loadKubeconfig(p.adminKubeconfig)), timeoutMs: 2_000 });
    try {
      await c.getRaw('/readyz');
      return c;
    } catch (err) {
      c.close();
      throw err;
    }
  }, { timeoutMs: 60_000, intervalMs: 200, detail: async () => `server log ${p.serverProc.logFile}:\n${await logTail(p.serverProc.logFile)}` });
}

/** Where every lab node's cgroupRoot lies (labCgroupRoot). */
const LAB_CGROUP_PARENT = '/nodelet-lab';

/**
 * The cgroupRoot of the lab node whose state is in `stateDir`: `/nodelet-lab/<dir name>-<hash of
 * its path>`, one per node (added nodes have their own state dirs), removed by labDown.
 */
export function labCgroupRoot(stateDir: string): string {
  const dir = resolve(stateDir);
  const name = basename(dir).replace(/[^A-Za-z0-9._-]/g, '_');
  return `${LAB_CGROUP_PARENT}/${name}-${createHash('sha256').update(dir).digest('hex').slice(0, 8)}`;
}

/**
 * labDown's cgroup step, once containerd is down: the node's tree in every hierarchy (kubepods and
 * the pod cgroups, with whatever a cancelled task creation left in them), then `/nodelet-lab` when
 * no other lab node uses it. A cgroup that still holds a process is named, not forced.
 */
async function removeLabCgroups(stateDir: string): Promise<string[]> {
  const mounts = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  const problems: string[] = [];
  for (const dir of cgroupPathInEveryHierarchy(mounts, labCgroupRoot(stateDir))) {
    await removeCgroupTree(dir).catch((err: unknown) => problems.push(`cgroup ${dir}: ${describeError(err)}`));
  }
  for (const dir of cgroupPathInEveryHierarchy(mounts, LAB_CGROUP_PARENT)) {
    await rmdir(dir).catch(() => undefined); // absent, or another lab node's tree is still in it
  }
  return problems;
}

/**
 * Joins `o.nodeName` with a fresh bootstrap token, writes its agent config under `o.stateDir`
 * and starts `nodelet agent` against `runtimeEndpoint`, then waits for the node to be Ready.
 * `labUp` runs it for the first node; `labAddNode` for further nodes of the same server.
 */
export async function startLabAgent(o: LabOptions, adminKubeconfig: string, admin: ApiClient, runtimeEndpoint: string): Promise<void> {
  const p = labPaths(o.stateDir);
  const say = o.log ?? (() => {});
  const marker = o.stateDir;
  if (!existsSync(p.agentKubeconfig)) {
    say('joining the node (bootstrap token → node credential)…');
    const tok = await createToken({ kubeconfig: adminKubeconfig, ttlMs: 10 * 60_000, description: 'nodelet lab up' });
    await joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: o.nodeName, kubeconfigPath: p.agentKubeconfig, tokenFile: p.agentToken, caFile: p.clusterCa });
  }
  // join wrote the cluster CA: the API server reaches the node API (logs, exec) with a client certificate of it.
  // The runtime endpoint and directories are flags below too; in the file they tell `nodelet doctor`
  // where this node's runtime and CNI state are.
  writeFileSync(p.agentConfig, toYaml({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    ...agentAuthentication(p.clusterCa),
    containerRuntimeEndpoint: runtimeEndpoint,
    rootDir: p.agentRoot,
    cniBinDir: p.cniBin,
    cniConfDir: p.cniConf,
    ...(o.cniPluginDirs ? { cniPluginDirs: o.cniPluginDirs } : {}),
    cniBridgeName: o.bridge,
    cniIpamDataDir: p.ipam,
    cniCacheDir: p.cniCache,
    cniSocketPath: join(p.agentRoot, 'cni.sock'),
    podLogsDir: join(o.stateDir, 'pods-logs'),
    proxy: { mode: o.proxyMode ?? 'nftables', clusterCIDR: o.clusterCidr },
    // kubelet's pod and QoS cgroups, below a root of this node's own: labs, tests and an installed
    // agent share the host's cgroup tree, and each agent's orphan sweep must see only its pods.
    cgroupsPerQOS: true,
    cgroupRoot: labCgroupRoot(o.stateDir),
    // The agents route between the lab's nodes (docs/network.md); each lab its own VNI (pod-network.ts).
    podNetwork: { ...(o.podNetwork ? { backend: o.podNetwork } : {}), vxlanVNI: labVxlanVni(o.clusterCidr) },
    // Nothing routes off the node network, so a namespaced node has no upstream resolvers.
    ...(o.netns ? { resolvConf: '' } : {}),
    ...o.agentConfig,
  }), { mode: 0o600 });

  let agentPid = await runningPid(p.agentProc, marker);
  if (agentPid !== undefined) say(`nodelet agent of node "${o.nodeName}" already runs (pid ${agentPid})`);
  else {
    say(`starting nodelet agent as node "${o.nodeName}"…`);
    agentPid = await startDetached(p.agentProc, [
      'agent', '--config', p.agentConfig, '--kubeconfig', p.agentKubeconfig, '--node-name', o.nodeName,
      '--container-runtime-endpoint', runtimeEndpoint, '--cni-bin-dir', p.cniBin, '--cni-conf-dir', p.cniConf,
      '--root-dir', p.agentRoot, '--port', String(o.nodeApiPort), '--healthz-port', String(o.healthzPort),
      ...(o.nodeIp ? ['--node-ip', o.nodeIp] : []),
    ], process.env, o.netns ? netnsExec(netnsName(o.nodeName)) : []);
  }
  say('waiting for the node to become Ready…');
  const detail = async (): Promise<string> => `agent log ${p.agentProc.logFile}:\n${await logTail(p.agentProc.logFile)}`;
  // An agent that exited (a port in use, a bad config) never becomes Ready: say so at once, not after the timeout.
  let exited: AgentError | undefined;
  const node = await pollUntil(`node "${o.nodeName}" to become Ready`, async () => {
    // By PID, not by argv: while nsenter and the launcher exec the agent, /proc/<pid>/cmdline
    // reads empty for a moment, which an argv check took for an exited agent.
    if (!(await isAlive(agentPid))) {
      throw (exited = new AgentError('ERR_FAILED_PRECONDITION', `the agent of node "${o.nodeName}" exited; ${await detail()}`));
    }
    const n = await admin.get<Node>(NODES, o.nodeName);
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
  }, { timeoutMs: o.readyTimeoutMs, intervalMs: 200, detail, fatal: (e) => e === exited });
  // logs/exec go through the API server, which verifies the agent: wait for its CSR-issued certificate.
  // The cluster approves only the Node name unasked (the node's own status proves nothing), so
  // the lab approves its first request as the admin would, knowing the names itself: the node
  // name, this machine's hostname, and the address it gave the agent (or, without one, this
  // machine's addresses, of which the agent picks one). Renewals are approved by the cluster.
  say('waiting for the node\'s serving certificate (CSR approved by the lab as the admin, and signed)…');
  const ip = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
  const ca = readFileSync(p.clusterCa, 'utf8');
  const vouched = { nodeName: o.nodeName, dnsNames: [o.nodeName, hostname().toLowerCase()], ips: o.nodeIp ? [o.nodeIp] : machineAddresses(), reason: 'NodeletLabUp' };
  await pollUntil(`the agent of node "${o.nodeName}" to serve a certificate of the cluster CA for ${ip}`, async () => {
    await approveNodeServingCsrs(admin, vouched);
    return verifiedTls(ip, o.nodeApiPort, ca);
  }, { timeoutMs: o.readyTimeoutMs, intervalMs: 200, detail });
}

/** Every address of this machine's interfaces (an agent without --node-ip reports one of them). */
function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.split('%')[0]!));
}

/** True once a TLS connection to host:port verifies against `ca`, with the certificate naming `host`. */
function verifiedTls(host: string, port: number, ca: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host, port, ca }, () => {
      s.end();
      resolve(true);
    });
    s.setTimeout(2000, () => s.destroy(new Error('no TLS handshake within 2 s')));
    s.on('error', reject);
  });
}

export interface LabDownResult {
  removedSandboxes: number;
  stopped: string[];
  problems: string[];
}

export async function labDown(opts: Partial<LabOptions> & { keepState?: boolean } = {}): Promise<LabDownResult> {
  const p = labPaths(resolve(opts.stateDir ?? defaultLabOptions().stateDir));
  const o = defaultLabOptions({ ...opts, ...(opts.nodeNetwork ? {} : recordedNodeNetwork(p.nodeNetwork)) });
  const say = o.log ?? (() => {});
  const marker = o.stateDir;
  const problems: string[] = [];
  const stopped: string[] = [];
  let removedSandboxes = 0;
  // Without a state dir nothing of this node runs, but its namespace or network may be left.
  if (!existsSync(o.stateDir)) return { removedSandboxes, stopped, problems: [...(await removeLabCgroups(o.stateDir)), ...(await removeNodeNetworking(o))] };

  // 1. Pod sandboxes go first, while the agent still answers the runtime's CNI DEL. A containerd
  // that was killed (its socket file outlives it) cannot be asked: step 4 sweeps its shims,
  // containers and mounts from the host side, and the pods' network goes with their namespaces,
  // the bridge (5) and the state dir's IPAM (6).
  const socket = join(p.containerd, 'containerd.sock');
  if (existsSync(socket)) {
    try {
      const { client } = await connectCriClient({ endpoint: `unix://${socket}`, timeoutMs: 10_000 });
      try {
        const sandboxes = (await client.runtime.listPodSandbox({})).items ?? [];
        if (sandboxes.length) say(`removing ${sandboxes.length} pod sandbox(es)…`);
        for (const s of sandboxes) {
          try {
            await client.runtime.stopPodSandbox({ podSandboxId: s.id }, { timeoutMs: 60_000 });
            await client.runtime.removePodSandbox({ podSandboxId: s.id }, { timeoutMs: 60_000 });
            removedSandboxes++;
          } catch (err) {
            // Gone between the listing and the stop (the agent's garbage collection removes dead
            // sandboxes meanwhile): what down wants, not a problem.
            if (hasCode(err, 'ERR_NOT_FOUND')) continue;
            problems.push(`sandbox ${s.id.slice(0, 13)}: ${describeError(err)}`);
          }
        }
      } finally {
        client.close();
      }
    } catch (err) {
      if ((await labRuntimeStatus({ dir: p.containerd })).running) problems.push(`runtime: ${describeError(err)}`);
      else say('containerd is not running (killed?): its pods are removed from the host side');
    }
  }
  // 2–3. Agent, then server.
  if (await stopProcess(p.agentProc, marker)) stopped.push('agent');
  if (await stopProcess(p.serverProc, marker)) stopped.push('server');
  // 4. containerd, and whatever its shims and mounts left.
  const rt = await labRuntimeDown({ dir: p.containerd });
  if (rt.wasRunning) stopped.push('containerd');
  problems.push(...rt.problems);
  // 4b. What the agent mounted for its pods (secret/projected tmpfs, subPath binds) outlives it.
  try {
    await unmountUnder(o.stateDir);
  } catch (err) {
    problems.push(`mounts: ${describeError(err)}`);
  }
  // 4c. The node's cgroups (the agent leaves kubepods behind when it stops, as kubelet does).
  problems.push(...(await removeLabCgroups(o.stateDir)));
  // 5. The bridge the CNI bridge plugin created (CNI never deletes bridges); a namespaced node's
  // is inside its namespace (5c), and a host bridge of that name belongs to another node.
  if (!o.netns && existsSync(`/sys/class/net/${o.bridge}`)) {
    try {
      execFileSync('ip', ['link', 'delete', o.bridge]);
    } catch (err) {
      problems.push(`bridge ${o.bridge}: ${describeError(err)}`);
    }
  }
  // 5b. The service proxy's table and the pod network's routes, device and masquerade chain (kept
  // by the agent across restarts; the lab is going away). A node sharing the host's namespace
  // beside the first (proxy off, pod network `none`) leaves them to the first; a node whose proxy
  // is off still ran the pod network (the HA e2e's: its VXLAN device and masquerade chain were left).
  if (!o.netns) {
    if ((o.proxyMode ?? 'nftables') !== 'none') {
      const t = removeProxyTable();
      if (t.problem) problems.push(t.problem);
    }
    const podNetwork = (o.agentConfig?.podNetwork ?? {}) as { backend?: string };
    if (podNetwork.backend !== 'none') problems.push(...(await removeHostPodNetwork(o.clusterCidr)));
  }
  // 5c–d. The node's network namespace, the node network.
  problems.push(...(await removeNodeNetworking(o)));
  // 6. State.
  if (!opts.keepState) rmSync(o.stateDir, { recursive: true, force: true });
  return { removedSandboxes, stopped, problems };
}

/**
 * labDown's network steps: a namespaced node's namespace (with its veth, pod bridge, proxy table
 * and routes), then the node network, once the server and first node listening on it are gone.
 */
async function removeNodeNetworking(o: LabOptions): Promise<string[]> {
  const problems: string[] = [];
  if (o.netns) problems.push(...(await deleteNodeNetns(o.nodeName).catch((e: Error) => [`netns: ${e.message}`])));
  if (o.nodeNetwork) await deleteNodeNetworkBridge(o.nodeNetwork).catch((e: Error) => problems.push(`node network: ${e.message}`));
  return problems;
}

function recordedNodeNetwork(file: string): { nodeNetwork?: NodeNetwork } {
  try {
    return { nodeNetwork: JSON.parse(readFileSync(file, 'utf8')) as NodeNetwork };
  } catch {
    return {};
  }
}
