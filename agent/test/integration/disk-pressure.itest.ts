/**
 * Disk pressure on a real filesystem: the agent's root dir (nodefs) is a 64 MiB tmpfs of the test's
 * own, filled with one file until less than the `nodefs.available: 10%` threshold is free. The agent
 * must set DiskPressure, try node-level reclaim, evict the running pod with kubelet's message,
 * refuse new pods while the condition holds, and admit them again once the disk is freed and the
 * transition period has passed. Nothing outside the tmpfs is filled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { EVENTS, NODES, PODS } from '@nodelet/api';
import { expectRefusedUnderPressure, getPod, podSpec, skipUnlessRoot, startHarness } from './harness.js';

const Mi = 2 ** 20;

function sh(cmd: string, ...args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
}

test('disk pressure on a full tmpfs: DiskPressure=True, the pod evicted, new pods refused until the disk is freed', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('disk', { evictionHard: { 'nodefs.available': '10%' }, evictionPressureTransitionPeriod: '5s' }, 24, { inProcessAgent: false });
  // The harness unmounts whatever is left under its dir when it stops, this tmpfs included.
  t.after(() => h.stop());
  const root = join(h.dir, 'root');
  await mkdir(root, { recursive: true });
  sh('mount', '-t', 'tmpfs', '-o', 'size=64m,mode=0755', 'nodelet-it-disk', root);
  await h.restartAgent();
  const img = h.rt.images.busybox;
  const sleeper = { name: 'main', image: img, imagePullPolicy: 'IfNotPresent' as const, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] };
  await h.api.create(PODS, podSpec(h, 'victim', { containers: [sleeper] }));
  await pollUntil('victim Running', async () => (await getPod(h, 'victim')).status?.phase === 'Running', { timeoutMs: 60_000 });
  const pressure = async () => (await h.api.get(NODES, h.nodeName)).status?.conditions?.find((c) => c.type === 'DiskPressure');
  assert.equal((await pressure())?.status, 'False');

  // Fill the tmpfs to 1 MiB short of full: 1 of 64 MiB free is under the 10 % threshold.
  const fill = join(root, 'fill');
  const fs = await statfs(root);
  sh('fallocate', '-l', String(fs.bavail * fs.bsize - Mi), fill);

  const cond = await pollUntil('DiskPressure=True', async () => {
    const c = await pressure();
    return c?.status === 'True' ? c : undefined;
  }, { timeoutMs: 30_000 });
  assert.deepEqual([cond.reason, cond.message], ['KubeletHasDiskPressure', 'kubelet has disk pressure']);
  const evicted = await pollUntil('victim Failed/Evicted', async () => {
    const p = await getPod(h, 'victim');
    return p.status?.phase === 'Failed' && p.status.reason === 'Evicted' ? p : undefined;
  }, { timeoutMs: 40_000 });
  t.diagnostic(evicted.status!.message!);
  assert.match(evicted.status!.message!, /^The node was low on resource: ephemeral-storage\. Threshold quantity: \d+(Ki|Mi)?, available: \d+(Ki|Mi)?\. /);

  // While the condition holds no pod is admitted, whatever its QoS.
  await h.api.create(PODS, podSpec(h, 'late', { containers: [{ ...sleeper, resources: { requests: { memory: '16Mi' }, limits: { memory: '16Mi' } } }] }));
  await expectRefusedUnderPressure(h, 'late', 'The node had condition: [DiskPressure]. ');

  // Freed: the condition clears after the transition period, and pods are admitted again.
  await rm(fill);
  await pollUntil('DiskPressure=False', async () => (await pressure())?.status === 'False', { timeoutMs: 40_000 });
  await h.api.create(PODS, podSpec(h, 'after', { containers: [sleeper] }));
  await pollUntil('after Running', async () => (await getPod(h, 'after')).status?.phase === 'Running', { timeoutMs: 60_000 });
  assert.ok((await h.api.list(EVENTS, { namespace: 'default' })).items.some((e) => e.reason === 'NodeHasDiskPressure'), 'node condition event');
});
