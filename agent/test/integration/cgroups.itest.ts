// Pod cgroups on a real containerd (cgroupfs driver): a Burstable pod's cgroup sits at
// <cgroupRoot>/kubepods/burstable/pod<uid>, its containers' cgroups beneath it (their processes
// are there), its memory limit is the sum of the containers' limits, its pids limit is
// podPidsLimit, and the cgroup is gone once the pod is deleted, a process left in it killed first;
// a pod cgroup left in one hierarchy only (a killed agent's half-done removal) is found and removed.
// The test's own cgroupRoot keeps it apart from other agents on the host; it removes that tree when done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PODS } from '@nodelet/api';
import { cgroupPathInEveryHierarchy, describeError, pollUntil, removeCgroupTree } from '@nodelet/base';
import { parseMountinfo } from '../../src/stats/cgroup.js';
import type { Summary } from '../../src/stats/types.js';
import { getPod, podSpec, skipUnlessRoot, startHarness, type Harness } from './harness.js';

function get(h: Harness, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: h.agent.nodeApiPort!, path, rejectUnauthorized: false, headers: { Authorization: `Bearer ${h.cp.adminToken}` } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const MiB = 1024 * 1024;
const PIDS = 321;

async function childProcs(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const procs = (await readFile(join(dir, e.name, 'cgroup.procs'), 'utf8')).trim();
    if (procs) out.push(...procs.split('\n'));
  }
  return out;
}

test('pod cgroups: kubepods/burstable/pod<uid> holds the containers, summed memory limit, pids limit, removed with the pod', { timeout: 240_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const mounts = parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'));
  const v1 = mounts.v1.has('memory') && mounts.v1.has('pids');
  const root = `/nodelet-itest-cgroups-${process.pid}`;
  const dirOf = (controller: 'memory' | 'pids', rel: string): string => join(v1 ? mounts.v1.get(controller)!.mount : mounts.v2!.mount, root, rel);
  t.after(async () => {
    for (const dir of cgroupPathInEveryHierarchy(mounts, root)) await removeCgroupTree(dir).catch((err: unknown) => t.diagnostic(`${dir} left: ${describeError(err)}`));
  });
  const h = await startHarness('cgroups', { cgroupsPerQOS: true, cgroupRoot: root, podPidsLimit: PIDS }, 43);
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  const c = (name: string, mem: string) => ({
    name, image: img, imagePullPolicy: 'IfNotPresent' as const, command: ['sleep', '3600'],
    resources: { requests: { cpu: '10m', memory: '8Mi' }, limits: { cpu: '200m', memory: mem } },
  });
  await h.api.create(PODS, podSpec(h, 'limited', { containers: [c('a', '32Mi'), c('b', '16Mi')], terminationGracePeriodSeconds: 0 }));
  const pod = await pollUntil('pod running', async () => {
    const p = await getPod(h, 'limited');
    return p.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 120_000 });
  assert.equal(pod.status?.qosClass, 'Burstable');
  const rel = `kubepods/burstable/pod${pod.metadata.uid}`;
  const memDir = dirOf('memory', rel);
  assert.equal((await readFile(join(memDir, v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8')).trim(), String(48 * MiB));
  assert.equal((await readFile(join(dirOf('pids', rel), 'pids.max'), 'utf8')).trim(), String(PIDS));
  // The pause and both app containers run in cgroups beneath the pod's.
  const procs = await pollUntil('container processes under the pod cgroup', async () => {
    const p = await childProcs(memDir);
    return p.length >= 3 ? p : undefined;
  }, { timeoutMs: 30_000 });
  const own = await readFile(`/proc/${procs[0]}/cgroup`, 'utf8');
  assert.match(own, new RegExp(`${root}/${rel}/`), own);

  // The node API: /metrics/cadvisor agrees with /stats/summary (what kubectl top reads through
  // metrics-server's /metrics/resource) for the container, at the same measurement time.
  await pollUntil('summary and cadvisor agree on container a', async () => {
    const sum = JSON.parse((await get(h, '/stats/summary')).body) as Summary;
    const cad = await get(h, '/metrics/cadvisor');
    assert.equal(cad.status, 200, cad.body);
    const c = sum.pods.find((p) => p.podRef.uid === pod.metadata.uid)?.containers.find((x) => x.name === 'a');
    const line = cad.body.split('\n').find((l) => l.startsWith('container_memory_working_set_bytes{container="a",') && l.includes(`pod="limited"`));
    if (!c?.memory?.workingSetBytes || !line) return false;
    assert.match(line, new RegExp(`id="${root}/${rel}/[0-9a-f]{64}"`), line);
    const [, value, ts] = line.split(' ');
    // Equal once both answers come from the same stats round (the summary's time is whole seconds).
    return Math.floor(Number(ts) / 1000) === Math.floor(Date.parse(c.memory.time) / 1000) && Number(value) === c.memory.workingSetBytes;
  }, { timeoutMs: 60_000 });
  const cfg = JSON.parse((await get(h, '/configz')).body) as { kubeletconfig: Record<string, unknown> };
  assert.equal(cfg.kubeletconfig.podPidsLimit, PIDS);
  assert.equal(cfg.kubeletconfig.cgroupRoot, root);
  const probes = await get(h, '/metrics/probes');
  assert.equal(probes.status, 200);
  assert.match(probes.body, /# TYPE prober_probe_total counter/);

  // A process that escaped its container's teardown (moved into a cgroup below the pod's by hand
  // here): once the pod is gone, the agent kills it and removes the cgroup, as kubelet does.
  const stray = spawn('sleep', ['600'], { stdio: 'ignore' });
  const strayExit = new Promise<NodeJS.Signals | null>((done) => stray.once('exit', (_code, signal) => done(signal)));
  t.after(() => {
    if (stray.exitCode === null && stray.signalCode === null) stray.kill('SIGKILL');
  });
  await mkdir(join(memDir, 'stray'));
  await writeFile(join(memDir, 'stray', 'cgroup.procs'), String(stray.pid));

  await h.api.delete(PODS, 'limited', { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil('pod cgroup removed', async () => readdir(memDir).then(() => false, () => true), { timeoutMs: 90_000 });
  assert.equal(await strayExit, 'SIGKILL', 'the stray process was killed');

  // What an agent killed between the rmdirs of one pod's hierarchies leaves (the soak found one):
  // the pod's cgroup in the memory hierarchy only, the cpu one (removed first) gone. The agent
  // finds it there and removes it.
  const half = dirOf('memory', 'kubepods/besteffort/pod0d15ea5e-0000-4000-8000-00000000dead');
  await mkdir(half);
  await pollUntil('the half-removed pod cgroup removed', async () => readdir(half).then(() => false, () => true), { timeoutMs: 30_000 });
});
