import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PODS } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';
import { startAgentProcess } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const sleeper = (h: Harness, name: string) =>
  podSpec(h, name, { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 0.2; done"] }] });

async function running(h: Harness, name: string) {
  return pollUntil(`${name} Running/Ready`, async () => {
    const p = await getPod(h, name);
    return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? p : undefined;
  }, { timeoutMs: 60_000 });
}

test('kill -9 of the agent while pods run and while one is being created: the restarted agent keeps containers and converges', { timeout: 150_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('restart', {}, 3, { inProcessAgent: false });
  let agent = await startAgentProcess({ args: h.agentArgs });
  t.after(async () => {
    // the harness deletes every pod through the API; a running agent completes the deletions
    if (agent.exited()) agent = await startAgentProcess({ args: h.agentArgs });
    await h.stop();
    await agent.stop();
  });

  await h.api.create(PODS, sleeper(h, 'keep'));
  const before = await running(h, 'keep');
  const keepUid = before.metadata.uid!;
  const keepId = before.status!.containerStatuses![0]!.containerID!;
  const sandboxesBefore = await h.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': keepUid } } });
  assert.equal(sandboxesBefore.items.length, 1);

  // A pod caught half-created: kill -9 as soon as its sandbox exists.
  const half = await h.api.create(PODS, sleeper(h, 'half'));
  await pollUntil('sandbox of "half" created', async () => (await h.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': half.metadata.uid! } } })).items.length > 0, { timeoutMs: 30_000, intervalMs: 10 });
  await agent.kill('SIGKILL');
  await agent.stop(); // gone: this removes its output file

  agent = await startAgentProcess({ args: h.agentArgs });
  const after = await running(h, 'half');
  assert.equal(after.metadata.uid, half.metadata.uid);
  const keep = await getPod(h, 'keep');
  const cs = keep.status!.containerStatuses![0]!;
  assert.equal(cs.containerID, keepId, 'the running container was adopted, not restarted');
  assert.equal(cs.restartCount, 0);
  assert.equal(keep.status!.startTime, before.status!.startTime);
  for (const [uid, name] of [[keepUid, 'keep'], [half.metadata.uid!, 'half']] as const) {
    const sbs = await h.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } });
    assert.equal(sbs.items.filter((s) => s.state === 'SANDBOX_READY').length, 1, `exactly one ready sandbox for ${name}`);
    const cts = await h.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid }, state: { state: 'CONTAINER_RUNNING' } } });
    assert.equal(cts.containers.length, 1, `exactly one running container for ${name}`);
  }
  const keepSandbox = await h.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': keepUid } } });
  assert.equal(keepSandbox.items[0]!.id, sandboxesBefore.items[0]!.id, 'same sandbox');
});
