/**
 * One density run (bench/density.ts): a fresh control plane (`nodelet server`, a child process, on
 * SQLite or on a test etcd), `nodelet hollow --nodes N` (a second child), N nodes Ready, then
 * D Deployments of R replicas created at once, until every pod is Running. Measured:
 *
 *   per pod   creationTimestamp → Running seen by a watch (1 s resolution, as the SLI), and the
 *             watch-precise ADDED seen → Running seen; ADDED → bound (spec.nodeName seen)
 *   scheduler pods bound/s from the first binding to the last
 *   server    RSS (peak during the burst, at the end) and CPU seconds (burst; whole run), from /proc
 *   watches   the server's open connections (each watch holds one), and the hollow nodes' own
 *             count of open watches and events delivered to them during the burst
 *   leases    renewals per second (MODIFIED events of kube-node-lease leases over the burst)
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ApiClient, DEPLOYMENTS, LEASES, loadKubeconfig, NAMESPACES, NODES, PODS, SERVICEACCOUNTS, type Deployment, type Pod } from '@nodelet/api';
import { hasCode, pollUntil } from '@nodelet/base';
import { freePort, startNodeletProcess, type NodeletProcessOptions, type TestProcess } from '@nodelet/base/testing';
import { placement, placementViolations, type Workload } from './lib/placement.js';
import { startTestEtcd, type TestEtcd } from '../control-plane/src/storage/testing/etcd.js';
import { percentile } from './lib/percentile.js';
import { machineCpuSeconds, mainThreadCpuSeconds, processCpuSeconds } from './lib/proc-sample.js';
import { acceptQueue, establishedTo, listenOverflows } from './lib/proc-net.js';
import { countWrites, podRequestTimes, WRITES_AUDIT_POLICY, type WriteCount } from './density-writes.js';
import { noteStages, stageFigures, type PodSeen, type StageFigures } from './density-stages.js';

const NS = 'density';

export interface RunSpec {
  store: 'sqlite' | 'etcd';
  nodes: number;
  deployments: number;
  replicas: number;
  /** Run the TypeScript sources (bin/nodelet-dev) instead of the built dist (bin/nodelet). */
  source: boolean;
  /** Deadline for every pod to be Running. */
  timeoutMs: number;
  /**
   * `plain`: bare pods. `spread`: even-numbered Deployments carry a topology spread constraint
   * (maxSkew 1 on the hostname, DoNotSchedule), odd-numbered ones required pod anti-affinity on the
   * hostname (at most one replica a node, so replicas ≤ nodes).
   */
  workload: Workload;
  /**
   * Pods created per second, one Pod object at a time (upstream's density SLO is per pod at a
   * steady creation rate); unset: the Deployments are created at once (the burst).
   */
  qps?: number;
  /** Run the server with an audit policy of writes only and count the writes of the measured window. */
  countWrites?: boolean;
  /** Write the server process's V8 CPU profile (whole run, written at its exit) into this directory. */
  serverCpuProf?: string;
}

export interface RunResult extends RunSpec {
  pods: number;
  running: number;
  /** Pods created per second, first ADDED seen to last (in the burst the ReplicaSets set the pace). */
  createdPerSec: number;
  startupP90S: number;
  /** Where the pods waited: each stage's distribution (bench/density-stages.ts). */
  stages: StageFigures[];
  /** With `countWrites`: the writes from the first create until every pod ran. */
  writes?: WriteCount[];
  startupP50S: number;
  startupP99S: number;
  preciseP50S: number;
  preciseP99S: number;
  boundP50S: number;
  boundP99S: number;
  podsBoundPerSec: number;
  burstS: number;
  nodesReadyS: number;
  serverRssPeakMiB: number;
  serverRssEndMiB: number;
  serverCpuBurstS: number;
  /** The server's JavaScript thread alone in the burst: what one thread can give is the burst's bound. */
  serverMainCpuBurstS: number;
  /** Every core of the machine in the burst (server, hollow nodes, etcd, the bench, the kernel). */
  machineCpuBurstS: number;
  serverCpuTotalS: number;
  serverConnections: number;
  /** Client connections opened during the burst (seen by a 250 ms sampler; each a TLS handshake). */
  connectionsOpened: number;
  /** The server's accept queue at its longest (sampled every 250 ms). */
  acceptQueuePeak: number;
  /** Connections the kernel dropped for a full accept queue during the burst (whole machine: TcpExt ListenOverflows). */
  listenOverflows: number;
  hollowRssPeakMiB: number;
  hollowCpuBurstS: number;
  hollowWatchesOpen: number;
  hollowWatchEvents: number;
  leaseRenewalsPerSec: number;
  /** Deployments whose Running pods break their placement rule (spread skew > 1, two anti-affine on a node). */
  placementViolations: number;
  wallS: number;
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** The last `hollow: stats {json}` line nodelet hollow printed (`--stats-every`), if any yet. */
function hollowStats(hollow: TestProcess): { watchesOpen: number; watchEvents: number } | undefined {
  const line = hollow.output().split('\n').findLast((l) => l.startsWith('hollow: stats '));
  return line === undefined ? undefined : (JSON.parse(line.slice('hollow: stats '.length)) as { watchesOpen: number; watchEvents: number });
}

function deployment(name: string, replicas: number, rule: ReturnType<typeof placement>): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { ...rule, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    },
  };
}

/**
 * Creates the run's pods as Pod objects at `spec.qps` a second (pod i at i/qps s, each create
 * started on time whatever the earlier ones take), pod i of Deployment `d<i mod D>`'s labels and
 * placement rule, and waits for every create to answer.
 */
async function createAtRate(api: ApiClient, spec: RunSpec, signal?: AbortSignal): Promise<void> {
  const pods = spec.deployments * spec.replicas;
  const t0 = performance.now();
  const creates: Array<Promise<unknown>> = [];
  // A failed create ends the run at the next tick of the schedule, through the run's cleanup
  // (a rejection left unhandled while the loop waits would end the process and orphan its children).
  let failed: { err: unknown } | undefined;
  for (let i = 0; i < pods; i++) {
    signal?.throwIfAborted();
    if (failed) throw failed.err;
    const wait = t0 + (i * 1000) / spec.qps! - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const d = i % spec.deployments;
    const template = deployment(`d${d}`, 1, placement(spec.workload, `d${d}`, d)).spec!.template;
    const create = api.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name: `d${d}-${i}`, namespace: NS }, spec: template.spec! });
    creates.push(create.catch((err: unknown) => void (failed ??= { err })));
  }
  await Promise.all(creates);
  if (failed) throw failed.err;
}

/** `seen` with each pod's request times from the audit log (the server's receipt of its binding and first status patch). */
function withRequestTimes(seen: Map<string, PodSeen>, requests: ReturnType<typeof podRequestTimes>): PodSeen[] {
  return [...seen].map(([name, s]) => ({ ...s, bindSent: requests.get(name)?.bind, statusSent: requests.get(name)?.firstStatus }));
}

/** One run; every process it starts is stopped (by PID) and every directory removed, also on failure. */
export async function densityRun(spec: RunSpec, progress: (msg: string) => void, signal?: AbortSignal): Promise<RunResult> {
  const t0 = performance.now();
  const dir = await mkdtemp(join(tmpdir(), `nodelet-density-${spec.store}-`));
  let etcd: TestEtcd | undefined;
  let server: TestProcess | undefined;
  let hollow: TestProcess | undefined;
  let admin: ApiClient | undefined;
  const stopWatches = new AbortController();
  const watches: Array<Promise<void>> = [];
  try {
    // 1. Control plane (child process), on SQLite or etcd.
    if (spec.store === 'etcd') etcd = await startTestEtcd();
    const port = await freePort();
    const auditLog = join(dir, 'audit.log');
    const audit: string[] = [];
    if (spec.countWrites) {
      await mkdir(join(dir, 'server'), { recursive: true });
      await writeFile(join(dir, 'audit-policy.yaml'), WRITES_AUDIT_POLICY);
      audit.push('--audit-policy-file', join(dir, 'audit-policy.yaml'), '--audit-log-path', auditLog);
    }
    // The daemons run as configured here (warn), not at the kit's info level: the figures are of them as they run.
    const kind: Pick<NodeletProcessOptions, 'dist' | 'signal'> = { dist: !spec.source, ...(signal ? { signal } : {}) };
    const kubeconfig = join(dir, 'server', 'admin.kubeconfig');
    server = await startNodeletProcess({
      ...kind,
      name: 'nodelet server',
      args: [
        'server', '--data-dir', join(dir, 'server'), '--bind-address', '127.0.0.1', '--port', String(port), '--registry-address', '', '--log-level', 'warn',
        ...(etcd ? ['--datastore-endpoint', etcd.endpoint] : []), ...audit,
      ],
      ...(spec.serverCpuProf ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', resolve(spec.serverCpuProf)] } : {}),
      logFile: join(dir, 'server.log'),
      graceMs: 30_000,
      readyTimeoutMs: 120_000,
      ready: async () => {
        if (!existsSync(kubeconfig)) return false;
        admin ??= new ApiClient({ ...(await loadKubeconfig(kubeconfig)), maxSockets: 256 });
        return admin.list(NAMESPACES).then(() => true, () => false);
      },
    });
    const serverPid = server.pid;
    const api = admin!;
    await api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await pollUntil('default service account', () => api.get(SERVICEACCOUNTS, 'default', { namespace: NS }).then(() => true, () => false), { timeoutMs: 30_000, intervalMs: 200, signal });
    progress(`server up (pid ${serverPid}, ${spec.store})`);

    // 2. Hollow nodes (child process), until every node is Ready with a pod CIDR.
    const tNodes = performance.now();
    const h = (hollow = await startNodeletProcess({
      ...kind,
      name: 'nodelet hollow',
      args: ['hollow', '--nodes', String(spec.nodes), '--kubeconfig', kubeconfig, '--stats-every', '1', '--log-level', 'warn'],
      logFile: join(dir, 'hollow.log'),
      graceMs: 60_000,
      readyTimeoutMs: 300_000,
      ready: (p) => /^hollow: \d+ nodes started/m.test(p.output()),
    }));
    await pollUntil(`${spec.nodes} nodes Ready`, async () => {
      const list = await api.list(NODES);
      return list.items.filter((n) => n.spec?.podCIDR && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === spec.nodes;
    }, { timeoutMs: 120_000, intervalMs: 500, signal });
    const nodesReadyS = (performance.now() - tNodes) / 1000;
    progress(`${spec.nodes} hollow nodes Ready in ${nodesReadyS.toFixed(1)} s`);

    // 3. Watches: pods of the bench namespace, node leases.
    const seen = new Map<string, PodSeen>();
    let firstAdded: number | undefined;
    let lastAdded = 0;
    let leaseRenewals = 0;
    const watchFailed = (what: string) => (err: unknown): void => {
      if (!stopWatches.signal.aborted) progress(`${what} watch ended: ${err instanceof Error ? err.message : String(err)}`);
    };
    watches.push((async () => {
      for await (const ev of api.watch(PODS, { namespace: NS, signal: stopWatches.signal })) {
        const now = Date.now();
        const p = ev.object as Pod;
        if (!p.metadata?.name || ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        const fresh = !seen.has(p.metadata.name);
        noteStages(seen, p, now);
        if (fresh) {
          // The pace of creation: first pod seen to last (a later event of an old pod is not a create).
          firstAdded ??= now;
          lastAdded = now;
        }
      }
    })().catch(watchFailed('pod')));
    watches.push((async () => {
      for await (const ev of api.watch(LEASES, { namespace: 'kube-node-lease', signal: stopWatches.signal })) if (ev.type === 'MODIFIED') leaseRenewals++;
    })().catch(watchFailed('lease')));

    // 4. The burst: D Deployments of R at once; sample the server while pods start.
    const pods = spec.deployments * spec.replicas;
    const cpu0 = processCpuSeconds(serverPid);
    const mainCpu0 = mainThreadCpuSeconds(serverPid);
    const machineCpu0 = machineCpuSeconds();
    const hollowPid = h.pid;
    const hollowCpu0 = processCpuSeconds(hollowPid);
    let hollowRssPeak = rssMiB(hollowPid);
    const events0 = hollowStats(h)?.watchEvents ?? 0;
    let rssPeak = rssMiB(serverPid);
    let conns = 0;
    // Every client connection seen open during the burst (sampled): a new one is a TLS handshake.
    const before = new Set(establishedTo(port));
    const opened = new Set<string>();
    let backlog = 0;
    const overflows0 = listenOverflows();
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMiB(serverPid));
      hollowRssPeak = Math.max(hollowRssPeak, rssMiB(hollowPid));
      const now = establishedTo(port);
      conns = Math.max(conns, now.length);
      for (const c of now) if (!before.has(c)) opened.add(c);
      backlog = Math.max(backlog, acceptQueue(port));
    }, 250);
    const tBurst = performance.now();
    const wall0 = Date.now();
    const leases0 = leaseRenewals;
    try {
      if (spec.qps) await createAtRate(api, spec, signal);
      else await Promise.all(Array.from({ length: spec.deployments }, (_v, i) => api.create(DEPLOYMENTS, deployment(`d${i}`, spec.replicas, placement(spec.workload, `d${i}`, i)))));
      let last = -1;
      await pollUntil(`${pods} pods Running`, () => {
        const n = [...seen.values()].filter((s) => s.running !== undefined).length;
        const tenth = Math.floor((n * 10) / pods);
        if (tenth !== last) progress(`  ${n}/${pods} Running after ${((performance.now() - tBurst) / 1000).toFixed(0)} s`);
        last = tenth;
        return n >= pods;
      }, { timeoutMs: spec.timeoutMs, intervalMs: 250, signal }).catch((err: unknown) => {
        // Out of time: the figures still say what happened, with the missing pods counted as never Running.
        if (!hasCode(err, 'ERR_DEADLINE_EXCEEDED')) throw err;
        progress(`timed out after ${spec.timeoutMs / 1000} s: pods not Running count as never (p99 is then infinite past 1 % missing)`);
      });
    } finally {
      clearInterval(sampler);
    }
    const burstS = (performance.now() - tBurst) / 1000;
    const serverCpuBurstS = processCpuSeconds(serverPid) - cpu0;
    const serverMainCpuBurstS = mainThreadCpuSeconds(serverPid) - mainCpu0;
    const machineCpuBurstS = machineCpuSeconds() - machineCpu0;
    const serverRssEndMiB = rssMiB(serverPid);
    const hollowCpuBurstS = processCpuSeconds(hollowPid) - hollowCpu0;
    const renewals = leaseRenewals - leases0;
    const stat = hollowStats(h) ?? { watchesOpen: NaN, watchEvents: NaN };

    const all = [...seen.values()].filter((s) => s.running !== undefined);
    const never = Array<number>(Math.max(0, pods - all.length)).fill(Infinity);
    const startup = [...all.map((s) => (s.running! - s.created) / 1000), ...never];
    const precise = [...all.map((s) => (s.running! - s.added) / 1000), ...never];
    const boundPods = [...seen.values()].filter((s) => s.bound !== undefined);
    const bound = [...boundPods.map((s) => (s.bound! - s.added) / 1000), ...Array<number>(Math.max(0, pods - boundPods.length)).fill(Infinity)];
    const nodeNames = (await api.list(NODES)).items.map((n) => n.metadata.name!);
    const runningPods = (await api.list(PODS, { namespace: NS, fieldSelector: 'status.phase=Running' })).items;
    const binds = boundPods.map((s) => s.bound!).sort((a, b) => a - b);
    const bindSpanS = binds.length > 1 ? (binds.at(-1)! - binds[0]!) / 1000 : NaN;
    return {
      ...spec,
      pods,
      running: all.length,
      startupP50S: percentile(startup, 50),
      startupP90S: percentile(startup, 90),
      startupP99S: percentile(startup, 99),
      createdPerSec: firstAdded !== undefined && lastAdded > firstAdded ? (seen.size - 1) / ((lastAdded - firstAdded) / 1000) : NaN,
      stages: stageFigures(spec.countWrites ? withRequestTimes(seen, podRequestTimes(auditLog, NS)) : seen.values()),
      ...(spec.countWrites ? { writes: countWrites(auditLog, wall0, Date.now()) } : {}),
      preciseP50S: percentile(precise, 50),
      preciseP99S: percentile(precise, 99),
      boundP50S: percentile(bound, 50),
      boundP99S: percentile(bound, 99),
      podsBoundPerSec: binds.length / bindSpanS,
      burstS,
      nodesReadyS,
      serverRssPeakMiB: rssPeak,
      serverRssEndMiB,
      serverCpuBurstS,
      serverMainCpuBurstS,
      machineCpuBurstS,
      serverCpuTotalS: processCpuSeconds(serverPid),
      serverConnections: conns,
      connectionsOpened: opened.size,
      acceptQueuePeak: backlog,
      listenOverflows: listenOverflows() - overflows0,
      hollowRssPeakMiB: hollowRssPeak,
      hollowCpuBurstS,
      hollowWatchesOpen: stat.watchesOpen,
      hollowWatchEvents: stat.watchEvents - events0,
      leaseRenewalsPerSec: renewals / burstS,
      placementViolations: placementViolations(spec.workload, spec.deployments, nodeNames, runningPods),
      wallS: (performance.now() - t0) / 1000,
    };
  } finally {
    stopWatches.abort();
    await Promise.all(watches);
    if (hollow) {
      const tStop = performance.now();
      await hollow.stop();
      const ended = hollow.exited();
      progress(`nodelet hollow stopped in ${((performance.now() - tStop) / 1000).toFixed(1)} s (${ended?.signal ? `signal ${ended.signal}` : `exit ${ended?.code}`})`);
    }
    admin?.close();
    await server?.stop();
    await etcd?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
