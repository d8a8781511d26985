/**
 * One look at the node, taken the same way every time the oracles need it: the API's pods bound
 * to the node, what the runtime holds (CRI), and what the host holds for pods (netns, veths,
 * host-local IP files, CNI cache entries, mounts, pod and log directories, cgroups). Read-only.
 */
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseMountinfo, relativeToMountRoot } from '@nodelet/base';
import { DEPLOYMENTS, PODS, type ApiClient, type Pod } from '@nodelet/api';
import { connectCriClient, netnsPathFromSandboxInfo } from '@nodelet/cri-client';
import { ResultCache } from '@nodelet/cni';
import { DEPLOYMENT_KIND, KIND_LABEL, SOAK_NAMESPACE, type WorkloadKind } from './workloads.js';
import type { DeploymentName } from './plan.js';

const exec = promisify(execFile);

export interface PodView {
  uid: string;
  namespace: string;
  name: string;
  kind?: WorkloadKind;
  deleting: boolean;
  ready: boolean;
  phase: string;
  /** App containers of the spec, with their API status. */
  containers: Array<{ name: string; containerID?: string; restartCount: number; running: boolean; waiting?: string }>;
  /** Init containers: name, and whether the API says they exited 0. */
  initContainers: Array<{ name: string; succeeded: boolean }>;
}

export interface SandboxView {
  id: string;
  uid: string;
  pod: string;
  ready: boolean;
  createdAt: bigint;
  netns?: string;
}

export interface ContainerView {
  id: string;
  sandboxId: string;
  uid: string;
  name: string;
  state: 'running' | 'created' | 'exited' | 'unknown';
  createdAt: bigint;
}

export interface HostView {
  netns: string[];
  veths: string[];
  /**
   * Host veths that no CNI cache entry names, attributed to the sandbox whose netns holds their
   * peer (looked up with nsenter, only for such veths): a sandbox whose ADD result was lost.
   */
  vethOwners: Record<string, string>;
  /** host-local allocations: `<net>/<ip>` and the container ID written in them. */
  ips: Array<{ file: string; owner: string }>;
  /** CNI result cache entries, with the host-side interfaces (veths) their results name. */
  cniCache: Array<{ file: string; containerID: string; veths: string[] }>;
  /** Mount points under the agent's pod dirs and the runtime's state, for ownership checks. */
  mounts: string[];
  podDirs: string[];
  /** Log dirs `<ns>_<name>_<uid>` with the uid parsed. */
  logDirs: Array<{ dir: string; uid: string }>;
  /** Container/sandbox IDs that have a cgroup (memory controller, `k8s.io` parent). */
  cgroups: string[];
  /** UIDs of the pod cgroups under the agent's kubepods (`<cgroupRoot>/kubepods[/<qos>]/pod<uid>`). */
  podCgroups: string[];
}

/** The soak's deployments and pods as the API sees them (scheduled or not). */
export interface WorkloadView {
  deployments: Array<{ name: string; kind?: WorkloadKind; want: number; replicas: number; ready: number; updated: number; observed: boolean }>;
  /** Soak pods not bound to any node yet. */
  unscheduled: string[];
}

export interface Observation {
  at: number;
  workload: WorkloadView;
  pods: PodView[];
  sandboxes: SandboxView[];
  containers: ContainerView[];
  host: HostView;
}

export interface ObserveTarget {
  api: ApiClient;
  nodeName: string;
  runtimeEndpoint: string;
  /** containerd's state dir (netns files and task bundles live below it). */
  runtimeState: string;
  agentRoot: string;
  podLogsDir: string;
  /** The agent's cgroupRoot with cgroupsPerQOS (its pod cgroups are under `kubepods` there); undefined without. */
  podCgroupRoot: string | undefined;
  cniCacheDir: string;
  ipamDir: string;
  bridge: string;
}

export async function observe(t: ObserveTarget): Promise<Observation> {
  const [workload, pods, cri, host] = await Promise.all([workloadView(t), apiPods(t), criState(t), hostState(t)]);
  const cached = new Set(host.cniCache.flatMap((e) => e.veths));
  if (host.veths.some((v) => !cached.has(v))) host.vethOwners = await vethOwners(cri.sandboxes, new Set(host.cniCache.map((e) => e.containerID)));
  return { at: Date.now(), workload, pods, ...cri, host };
}

async function workloadView(t: ObserveTarget): Promise<WorkloadView> {
  const deps = await t.api.list(DEPLOYMENTS, { namespace: SOAK_NAMESPACE, timeoutMs: 10_000 });
  const pods = await t.api.list(PODS, { namespace: SOAK_NAMESPACE, timeoutMs: 10_000 });
  return {
    deployments: deps.items.map((d) => ({
      name: d.metadata?.name ?? '',
      kind: DEPLOYMENT_KIND[d.metadata?.name as DeploymentName],
      want: d.spec?.replicas ?? 1,
      replicas: d.status?.replicas ?? 0,
      ready: d.status?.readyReplicas ?? 0,
      updated: d.status?.updatedReplicas ?? 0,
      observed: (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0),
    })),
    unscheduled: pods.items.filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? ''),
  };
}

async function apiPods(t: ObserveTarget): Promise<PodView[]> {
  const list = await t.api.listAll(PODS, { fieldSelector: `spec.nodeName=${t.nodeName}`, timeoutMs: 10_000 });
  return list.items.map(podView);
}

export function podView(p: Pod): PodView {
  const statuses = new Map((p.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  const inits = new Map((p.status?.initContainerStatuses ?? []).map((s) => [s.name, s]));
  return {
    uid: p.metadata?.uid ?? '',
    namespace: p.metadata?.namespace ?? '',
    name: p.metadata?.name ?? '',
    kind: p.metadata?.labels?.[KIND_LABEL] as WorkloadKind | undefined,
    deleting: !!p.metadata?.deletionTimestamp,
    ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    phase: p.status?.phase ?? '',
    containers: (p.spec?.containers ?? []).map((c) => {
      const s = statuses.get(c.name);
      return { name: c.name, containerID: s?.containerID?.replace(/^[a-z]+:\/\//, ''), restartCount: s?.restartCount ?? 0, running: !!s?.state?.running, waiting: s?.state?.waiting?.reason };
    }),
    initContainers: (p.spec?.initContainers ?? []).map((c) => ({ name: c.name, succeeded: inits.get(c.name)?.state?.terminated?.exitCode === 0 })),
  };
}

async function criState(t: ObserveTarget): Promise<{ sandboxes: SandboxView[]; containers: ContainerView[] }> {
  const { client } = await connectCriClient({ endpoint: t.runtimeEndpoint, timeoutMs: 10_000 });
  try {
    const items = (await client.runtime.listPodSandbox({}, { timeoutMs: 10_000 })).items ?? [];
    const sandboxes: SandboxView[] = [];
    for (const s of items) {
      let netns: string | undefined;
      try {
        netns = netnsPathFromSandboxInfo((await client.runtime.podSandboxStatus({ podSandboxId: s.id, verbose: true }, { timeoutMs: 10_000 })).info ?? {});
      } catch {
        netns = undefined; // removed between list and status: the next look settles it
      }
      sandboxes.push({ id: s.id, uid: s.labels?.['io.kubernetes.pod.uid'] ?? '', pod: `${s.metadata?.namespace}/${s.metadata?.name}`, ready: s.state === 'SANDBOX_READY', createdAt: BigInt(s.createdAt || 0), netns });
    }
    const cs = (await client.runtime.listContainers({}, { timeoutMs: 10_000 })).containers ?? [];
    const state = (s: string): ContainerView['state'] => (s === 'CONTAINER_RUNNING' ? 'running' : s === 'CONTAINER_CREATED' ? 'created' : s === 'CONTAINER_EXITED' ? 'exited' : 'unknown');
    const containers = cs.map((c) => ({ id: c.id, sandboxId: c.podSandboxId, uid: c.labels?.['io.kubernetes.pod.uid'] ?? '', name: c.metadata?.name ?? '', state: state(String(c.state)), createdAt: BigInt(c.createdAt || 0) }));
    return { sandboxes, containers };
  } finally {
    client.close();
  }
}

async function ls(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return []; // a directory that does not exist holds nothing
  }
}

async function hostState(t: ObserveTarget): Promise<HostView> {
  const netnsDirs = [join(t.runtimeState, 'netns'), join(t.runtimeState, 'io.containerd.grpc.v1.cri', 'netns')];
  const netns = (await Promise.all(netnsDirs.map(async (d) => (await ls(d)).map((n) => join(d, n))))).flat();
  let veths: string[] = [];
  if (existsSync(`/sys/class/net/${t.bridge}`)) {
    const { stdout } = await exec('ip', ['-j', 'link', 'show', 'master', t.bridge]);
    veths = (JSON.parse(stdout || '[]') as Array<{ ifname: string }>).map((l) => l.ifname);
  }
  const vethOwners: Record<string, string> = {};
  const ips: HostView['ips'] = [];
  for (const net of await ls(t.ipamDir)) {
    for (const f of await ls(join(t.ipamDir, net))) {
      if (!/^\d+\.\d+\.\d+\.\d+$|:/.test(f)) continue;
      const owner = (await readFile(join(t.ipamDir, net, f), 'utf8').catch(() => '')).split(/\s+/)[0] ?? '';
      ips.push({ file: `${net}/${f}`, owner });
    }
  }
  const cniCache = (await new ResultCache(t.cniCacheDir).list()).map((a) => ({
    file: a.file,
    containerID: a.containerID,
    veths: ((a.result?.interfaces ?? []) as Array<{ name?: string; sandbox?: string }>).filter((i) => !i.sandbox && i.name).map((i) => i.name!),
  }));
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const mounts = mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(join(t.agentRoot, 'pods') + '/') || m.startsWith(t.runtimeState + '/'));
  const podDirs = await ls(join(t.agentRoot, 'pods'));
  const logDirs = (await ls(t.podLogsDir)).filter((d) => !d.startsWith('.')).map((dir) => ({ dir, uid: dir.split('_').at(-1) ?? '' }));
  // Read where the memory hierarchy is mounted (v1 controller or the unified one).
  const cg = parseMountinfo(mountinfo);
  const memory = cg.v1.get('memory') ?? cg.v2;
  const inMemory = (path: string): string | undefined => memory && join(memory.mount, relativeToMountRoot(memory.root, path));
  // containerd puts a container without a cgroup parent at /k8s.io/<id>.
  const cgroups = (await ls(inMemory('/k8s.io') ?? '/nonexistent')).filter((n) => /^[0-9a-f]{64}$/.test(n));
  const podCgroups: string[] = [];
  const kubepods = t.podCgroupRoot === undefined ? undefined : inMemory(join(t.podCgroupRoot, 'kubepods'));
  if (kubepods) {
    for (const sub of ['', 'burstable', 'besteffort']) {
      for (const n of await ls(join(kubepods, sub))) {
        const uid = /^pod([0-9a-f-]{36})$/.exec(n)?.[1];
        if (uid) podCgroups.push(uid);
      }
    }
  }
  return { netns, veths, vethOwners, ips, cniCache, mounts, podDirs, logDirs, cgroups, podCgroups };
}

/** For sandboxes without a cache entry: host veth name (peer of the netns's eth0) → sandbox ID. */
async function vethOwners(sandboxes: SandboxView[], cachedIds: ReadonlySet<string>): Promise<Record<string, string>> {
  const byIndex = new Map<number, string>();
  for (const s of sandboxes) {
    if (!s.netns || cachedIds.has(s.id)) continue;
    try {
      const { stdout } = await exec('nsenter', [`--net=${s.netns}`, 'ip', '-j', 'link', 'show', 'eth0']);
      const peer = (JSON.parse(stdout) as Array<{ link_index?: number }>)[0]?.link_index;
      if (peer !== undefined) byIndex.set(peer, s.id);
    } catch {
      continue; // no eth0 (the ADD never got that far) or the netns is gone: owns no veth
    }
  }
  if (!byIndex.size) return {};
  const { stdout } = await exec('ip', ['-j', 'link', 'show', 'type', 'veth']);
  const out: Record<string, string> = {};
  for (const l of JSON.parse(stdout || '[]') as Array<{ ifindex: number; ifname: string }>) {
    const owner = byIndex.get(l.ifindex);
    if (owner) out[l.ifname] = owner;
  }
  return out;
}
