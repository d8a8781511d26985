/**
 * Runtime garbage collection after a crash (issue 15): the agent is killed with SIGKILL while a
 * 20-replica Deployment is being created, then started again. RunPodSandbox calls that were cut
 * short leave NotReady sandboxes (containerd keeps a sandbox whose network teardown failed, with a
 * zero creation time) and half-made containers (Created, or Exited with StartError). Once every
 * pod is Ready, one container-GC period later the runtime holds exactly what the pods need.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEPLOYMENTS, EVENTS, PODS, REPLICASETS, type Deployment } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { PERIODS } from '../../src/housekeeping/housekeeping.js';
import { skipUnlessRoot, startHarness } from './harness.js';
import { startAgentProcess, type TestProcess } from '@nodelet/base/testing';

const REPLICAS = 20;
/** A GC run itself (removals, CNI DEL through the runtime) and the PLEG relist it reads. */
const RUN_SLACK_MS = 8_000;

test('kill -9 of the agent during a 20-pod burst: after the restart, within one GC period, exactly one ready sandbox and one running container per pod', { timeout: 400_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('gc', {}, 11, { inProcessAgent: false, controllers: ['deployment', 'replicaset'] });
  let agent: TestProcess = await startAgentProcess({ args: h.agentArgs });
  t.after(async () => {
    // No scheduler or garbage collector runs: the Deployment and its ReplicaSets go by hand, then the
    // harness deletes the pods, which a running agent completes.
    await h.api.delete(DEPLOYMENTS, 'burst', { namespace: 'default' }).catch(() => undefined);
    for (const rs of (await h.api.list(REPLICASETS, { namespace: 'default' }).catch(() => ({ items: [] }))).items) {
      await h.api.delete(REPLICASETS, rs.metadata.name!, { namespace: 'default' }).catch(() => undefined);
    }
    if (agent.exited()) agent = await startAgentProcess({ args: h.agentArgs });
    await h.stop();
    await agent.stop();
  });

  const labels = { app: 'burst' };
  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'burst', namespace: 'default' },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeName: h.nodeName,
          terminationGracePeriodSeconds: 2,
          containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 0.2; done"] }],
        },
      },
    },
  };
  await h.api.create(DEPLOYMENTS, deployment);
  // Kill as soon as the burst is under way (the issue: 1.5 s after create), so that some
  // RunPodSandbox and CreateContainer calls are cut short.
  await pollUntil('the burst under way', async () => (await h.cri.runtime.listPodSandbox({})).items.length >= 5, { timeoutMs: 60_000, intervalMs: 20 });
  await agent.kill('SIGKILL');
  await agent.stop(); // gone: this removes its output file
  const [sbKilled, ctKilled] = await Promise.all([h.cri.runtime.listPodSandbox({}), h.cri.runtime.listContainers({})]);
  t.diagnostic(`at the kill: ${sbKilled.items.length} sandboxes (${sbKilled.items.filter((s) => s.state !== 'SANDBOX_READY').length} not ready), ${ctKilled.containers.length} containers`);

  agent = await startAgentProcess({ args: h.agentArgs });
  await pollUntil(`${REPLICAS} pods Ready`, async () => {
    const pods = (await h.api.list(PODS, { namespace: 'default', labelSelector: 'app=burst' })).items;
    return pods.length === REPLICAS && pods.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  }, { timeoutMs: 180_000, intervalMs: 250 });
  const [sbReady, ctReady] = await Promise.all([h.cri.runtime.listPodSandbox({}), h.cri.runtime.listContainers({})]);
  t.diagnostic(`all Ready: ${sbReady.items.length} sandboxes (${sbReady.items.filter((s) => s.state !== 'SANDBOX_READY').length} not ready), ${ctReady.containers.length} containers (${ctReady.containers.filter((c) => c.state !== 'CONTAINER_RUNNING').length} not running)`);

  const readyAt = Date.now();
  const pods = (await h.api.list(PODS, { namespace: 'default', labelSelector: 'app=burst' })).items;
  const uids = new Set(pods.map((p) => p.metadata.uid!));
  let last = '';
  await pollUntil('one ready sandbox and one running container per pod, nothing else', async () => {
    const [sbs, cts] = await Promise.all([h.cri.runtime.listPodSandbox({}), h.cri.runtime.listContainers({})]);
    const problems: string[] = [];
    for (const uid of uids) {
      const mine = sbs.items.filter((s) => s.labels['io.kubernetes.pod.uid'] === uid);
      if (mine.length !== 1 || mine[0]!.state !== 'SANDBOX_READY') problems.push(`pod ${uid}: sandboxes ${mine.map((s) => `${s.id.slice(0, 8)}/${s.state}/attempt ${s.metadata?.attempt}`).join(', ')}`);
      const ct = cts.containers.filter((c) => c.labels['io.kubernetes.pod.uid'] === uid);
      if (ct.length !== 1 || ct[0]!.state !== 'CONTAINER_RUNNING') problems.push(`pod ${uid}: containers ${ct.map((c) => `${c.id.slice(0, 8)}/${c.state}/attempt ${c.metadata?.attempt}`).join(', ')}`);
    }
    for (const s of sbs.items) if (!uids.has(s.labels['io.kubernetes.pod.uid'] ?? '')) problems.push(`sandbox ${s.id.slice(0, 8)} of no pod (${s.state})`);
    for (const c of cts.containers) if (!uids.has(c.labels['io.kubernetes.pod.uid'] ?? '')) problems.push(`container ${c.id.slice(0, 8)} of no pod (${c.state})`);
    last = problems.join('\n');
    return problems.length === 0;
  }, { timeoutMs: PERIODS.containers + RUN_SLACK_MS, intervalMs: 500 }).catch((err: unknown) => {
    assert.fail(`${String(err)}\n${last}`);
  });
  // The restarted agent's removals, from its log (it runs at info).
  const collected = agent.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('Garbage collected'));
  t.diagnostic(`converged ${((Date.now() - readyAt) / 1000).toFixed(1)} s after all pods were Ready; ${collected.length} removals logged`);

  // Each removal was logged once, with its reason; a leftover of a pod that exists got an event.
  const ids = collected.map((l) => String(l.sandboxId ?? l.containerId));
  assert.equal(new Set(ids).size, ids.length, 'each removal logged once');
  for (const l of collected) assert.ok(typeof l.reason === 'string' && l.reason.length > 0, `a reason: ${JSON.stringify(l)}`);
  const leftovers = sbReady.items.length - REPLICAS + ctReady.containers.length - REPLICAS;
  if (leftovers > 0) {
    assert.ok(collected.length >= leftovers, `${leftovers} leftovers when all pods were Ready, ${collected.length} removals logged`);
    await pollUntil('GarbageCollected events on the pods', async () => {
      const ev = (await h.api.list(EVENTS, { namespace: 'default' })).items.filter((e) => e.reason === 'GarbageCollected' && uids.has(e.involvedObject?.uid ?? ''));
      return ev.length > 0;
    }, { timeoutMs: 10_000 });
  } else {
    t.diagnostic('the kill left nothing behind this time (no RunPodSandbox was cut short)');
  }
});
