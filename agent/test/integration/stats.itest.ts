// Resource stats of a real agent on a private containerd 1.6 (which refuses ListPodSandboxStats
// for the agent's sandboxes, so pod numbers are summed from containers and the pause cgroup):
// a pod burning a CPU with `yes > /dev/null` shows about one core in /stats/summary and in
// /metrics/resource, a pod holding 48 MiB (a file on its /dev/shm tmpfs: memory charged to the
// container that wrote it, on the anon LRU, so in the working set) shows at least that much working
// set, and `nodelet cri stats|statsp` print the runtime's same numbers.
//
// The CPU bound: `yes` is single-threaded, so it can never use more than one core (upper bound
// 1.3 cores leaves room for sampling jitter). The lab VM has two cores shared with other
// sessions' builds and tests, so `yes` may get less than a core; the lower bound is therefore the
// smaller of 0.7 cores and 75 % of what the container's own cgroup says it got over the same
// stretch of time, measured independently of the agent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PODS } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { parseMountinfo, readProcessCgroup } from '../../src/stats/cgroup.js';
import type { Summary } from '../../src/stats/types.js';
import { getPod, podSpec, skipUnlessRoot, startHarness, type Harness } from './harness.js';

const MiB = 1024 * 1024;
const HELD = 48 * MiB;
const ROOT = join(import.meta.dirname, '..', '..', '..');

function get(h: Harness, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: h.agent.nodeApiPort!, path, rejectUnauthorized: false, headers: { Authorization: `Bearer ${h.cp.adminToken}` } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

async function summary(h: Harness): Promise<Summary> {
  const r = await get(h, '/stats/summary');
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as Summary;
}

/** `name{labels} value timestamp` samples of one metric. */
function samples(text: string, name: string): Array<{ labels: string; value: number; ts?: number }> {
  const out = [];
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)(?: (\\d+))?$`).exec(line);
    if (m) out.push({ labels: m[1] ?? '', value: Number(m[2]), ts: m[3] ? Number(m[3]) : undefined });
  }
  return out;
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(ROOT, 'bin', 'nodelet-dev'), args, { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
  });
}

test('resource stats: /stats/summary, /metrics/resource and nodelet cri stats on a real runtime', { timeout: 240_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('stats', {}, 23);
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  await h.api.create(PODS, podSpec(h, 'burn', { containers: [{ name: 'yes', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'yes > /dev/null'] }] }));
  await h.api.create(PODS, podSpec(h, 'mem', {
    containers: [{ name: 'hold', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', `head -c ${HELD} /dev/zero > /dev/shm/held && echo held; exec sleep 3600`] }],
    volumes: [{ name: 'scratch', emptyDir: {} }],
  }));
  for (const p of ['burn', 'mem']) await pollUntil(`${p} Running`, async () => (await getPod(h, p)).status?.phase === 'Running', { timeoutMs: 60_000 });

  // The burn container's own cgroup, read independently of the agent (its pid from the runtime).
  const burnId = (await getPod(h, 'burn')).status!.containerStatuses![0]!.containerID!.replace('containerd://', '');
  const st = await h.cri.runtime.containerStatus({ containerId: burnId, verbose: true });
  const pid = Number((JSON.parse(st.info.info!) as { pid: number }).pid);
  const mounts = parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'));
  const cgroupCpu = async (): Promise<{ at: number; ns: number }> => ({ at: Date.now(), ns: (await readProcessCgroup(pid, mounts)).cpuUsageNs! });
  const c0 = await cgroupCpu();

  // Two collector rounds (10 s apart) give the first rates; the held memory is in place once "held" is logged.
  await pollUntil('the held memory to be allocated', async () => (await get(h, '/containerLogs/default/mem/hold')).body.includes('held'), { timeoutMs: 60_000, intervalMs: 500 });
  let last: Summary | undefined;
  const s = await pollUntil('a summary with rates for both pods', async () => {
    const sum = (last = await summary(h));
    const burn = sum.pods.find((p) => p.podRef.name === 'burn');
    const mem = sum.pods.find((p) => p.podRef.name === 'mem');
    return burn?.containers[0]?.cpu?.usageNanoCores !== undefined && (mem?.containers[0]?.memory?.workingSetBytes ?? 0) >= HELD ? sum : undefined;
  }, {
    timeoutMs: 90_000,
    intervalMs: 1000,
    detail: () => `last pods: ${JSON.stringify(last?.pods.map((p) => ({ pod: p.podRef.name, cpu: p.cpu, memory: p.memory, containers: p.containers.map((c) => ({ name: c.name, cpu: c.cpu, memory: c.memory })) })))}`,
  });
  const c1 = await cgroupCpu();
  const measured = ((c1.ns - c0.ns) / (c1.at - c0.at)) * 1e3; // nanocores the cgroup saw over this whole stretch
  const lower = Math.min(0.7e9, 0.75 * measured);
  t.diagnostic(`cgroup-measured ${Math.round(measured / 1e6)}m; lower bound ${Math.round(lower / 1e6)}m`);

  // /stats/summary: the shape kubelet's clients read, and the numbers.
  assert.equal(s.node.nodeName, h.nodeName);
  assert.ok((s.node.cpu?.usageNanoCores ?? 0) > 0 && (s.node.cpu?.usageCoreNanoSeconds ?? 0) > 0);
  assert.ok((s.node.memory?.availableBytes ?? 0) > 0 && (s.node.memory?.workingSetBytes ?? 0) > 0);
  assert.ok((s.node.fs?.capacityBytes ?? 0) > 0 && s.node.runtime?.imageFs?.capacityBytes);
  assert.ok((s.node.rlimit?.maxpid ?? 0) > 0);
  assert.match(s.node.cpu!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'whole seconds, as metav1.Time');
  const burn = s.pods.find((p) => p.podRef.name === 'burn')!;
  const burnCpu = burn.containers[0]!.cpu!.usageNanoCores!;
  t.diagnostic(`summary: container ${Math.round(burnCpu / 1e6)}m, pod ${Math.round((burn.cpu?.usageNanoCores ?? 0) / 1e6)}m`);
  assert.ok(burnCpu >= lower && burnCpu <= 1.3e9, `yes container at ${burnCpu} nanocores`);
  assert.ok(burn.cpu!.usageNanoCores! >= lower && burn.cpu!.usageNanoCores! <= 1.3e9, `burn pod at ${burn.cpu!.usageNanoCores} nanocores`);
  assert.equal(burn.podRef.uid, (await getPod(h, 'burn')).metadata.uid);
  assert.ok((burn.network?.rxBytes ?? -1) >= 0 && burn.network?.name === 'eth0', 'pod network from its namespace');
  assert.ok(burn.containers[0]!.rootfs?.capacityBytes && burn.containers[0]!.logs?.capacityBytes);
  assert.ok(burn['ephemeral-storage']?.capacityBytes);
  const mem = s.pods.find((p) => p.podRef.name === 'mem')!;
  assert.ok(mem.containers[0]!.memory!.workingSetBytes! >= HELD, `hold container working set ${mem.containers[0]!.memory!.workingSetBytes}`);
  assert.ok(mem.memory!.workingSetBytes! >= mem.containers[0]!.memory!.workingSetBytes!, 'pod ≥ its container (plus the pause process)');
  // The emptyDir and the projected service-account token volume, as kubelet lists them.
  assert.deepEqual(mem.volume?.map((v) => v.name).sort(), ['kube-api-access-' + mem.volume!.find((v) => v.name.startsWith('kube-api-access-'))!.name.slice(16), 'scratch'].sort());
  assert.ok(mem.volume!.every((v) => (v.capacityBytes ?? 0) > 0));

  // /metrics/resource: the counters and their timestamps give the same rate.
  const scrape = async (): Promise<{ cpu: { value: number; ts: number }; ws: number }> => {
    const r = await get(h, '/metrics/resource');
    assert.equal(r.status, 200);
    const cpu = samples(r.body, 'container_cpu_usage_seconds_total').find((x) => x.labels === '{container="yes",namespace="default",pod="burn"}')!;
    const ws = samples(r.body, 'container_memory_working_set_bytes').find((x) => x.labels === '{container="hold",namespace="default",pod="mem"}')!;
    assert.deepEqual(samples(r.body, 'resource_scrape_error'), [{ labels: '', value: 0, ts: undefined }]);
    assert.equal(samples(r.body, 'node_cpu_usage_seconds_total').length, 1);
    assert.equal(samples(r.body, 'container_start_time_seconds').length, 2);
    return { cpu: { value: cpu.value, ts: cpu.ts! }, ws: ws.value };
  };
  const m1 = await scrape();
  const m2 = await pollUntil('the next collector round', async () => {
    const m = await scrape();
    return m.cpu.ts > m1.cpu.ts ? m : undefined;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  const rate = ((m2.cpu.value - m1.cpu.value) / ((m2.cpu.ts - m1.cpu.ts) / 1000)) * 1e9;
  t.diagnostic(`metrics/resource rate ${Math.round(rate / 1e6)}m`);
  assert.ok(rate >= lower && rate <= 1.3e9, `rate from /metrics/resource ${rate}`);
  assert.ok(m2.ws >= HELD);

  // nodelet cri stats / statsp: the runtime's numbers, the same working set the agent reports.
  const holdId = (await getPod(h, 'mem')).status!.containerStatuses![0]!.containerID!.replace('containerd://', '');
  const stats = await cli(['cri', '-r', h.rt.endpoint, 'stats', '-o', 'json', holdId]);
  assert.equal(stats.code, 0, stats.stderr);
  const cws = Number((JSON.parse(stats.stdout) as { stats: Array<{ memory: { workingSetBytes: { value: string } } }> }).stats[0]!.memory.workingSetBytes.value);
  const agentWs = (await summary(h)).pods.find((p) => p.podRef.name === 'mem')!.containers[0]!.memory!.workingSetBytes!;
  assert.ok(Math.abs(cws - agentWs) <= 0.05 * agentWs, `cri stats ${cws} vs summary ${agentWs}`);
  const statsp = await cli(['cri', '-r', h.rt.endpoint, 'statsp', '-s', '3']);
  assert.equal(statsp.code, 0, statsp.stderr);
  assert.match(statsp.stdout, /^POD\s+POD ID\s+CPU %\s+MEM$/m);
  const burnRow = statsp.stdout.split('\n').find((l) => l.startsWith('burn '))!;
  const pct = Number(burnRow.trim().split(/\s+/)[2]);
  assert.ok(pct >= lower / 1e7 && pct <= 130, `statsp CPU % of burn: ${pct}`);
  // go-units' HumanSize is Go's %.4g: 50.31 MB, but 51 MB when the working set is 51.00 MB to 4 digits.
  assert.match(statsp.stdout, /^mem\s+[0-9a-f]{13}\s+\S+\s+(5\d|[6-9]\d|\d{3,})(\.\d+)?MB$/m, 'mem pod ≥ 48 MiB (≈ 50.3 MB)');
});
