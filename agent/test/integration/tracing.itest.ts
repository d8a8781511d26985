// The pod journey as a timed trace (docs/tracing.md), end to end on the real path: the API server
// (in-process `nodelet server`), the scheduler with the control plane's tracer, the agent on real
// containerd and CNI. A pod created without a node is scheduled, started and made Ready; its trace,
// read the way `nodelet trace pod` reads it (server + the node's spans through nodes/proxy), has
// every step in order and its top level adds up to the journey.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PODS, type Pod } from '@nodelet/api';
import { SPAN } from '@nodelet/api/tracing';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startScheduler } from '@nodelet/control-plane';
import { fetchPodTrace, renderWaterfallSvg, type PodTrace } from '@nodelet/cli';
import { pickInternalIP } from '../../src/node/machine-info.js';
import { skipUnlessRoot, startHarness, podSpec } from './harness.js';

const NODELET_DEV = join(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet-dev');

test('nodelet trace pod: every step of a real pod journey in order, summing to create → Ready within 50 ms', async (t) => {
  if (!skipUnlessRoot(t)) return;
  // The node's spans come through nodes/proxy, which refuses a loopback agent (as kube-apiserver).
  const nodeAddress = pickInternalIP();
  if (nodeAddress === '127.0.0.1') return t.skip('this machine has no non-loopback IPv4 address for the agent');
  const h = await startHarness('trace', {}, 31, { nodeAddress });
  t.after(() => h.stop());
  const stopScheduler = new AbortController();
  const scheduler = await startScheduler({ client: h.api, logger: noopLogger, signal: stopScheduler.signal, tracer: h.cp.tracer });
  t.after(() => scheduler.close());

  const pod = podSpec(h, 'journey', {
    containers: [{
      name: 'web', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
      lifecycle: { postStart: { exec: { command: ['touch', '/tmp/started'] } } },
      readinessProbe: { exec: { command: ['test', '-f', '/tmp/started'] }, periodSeconds: 1 },
    }],
  });
  delete pod.spec!.nodeName;
  await h.api.create(PODS, pod);
  const ready = (p: Pod): boolean => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  await pollUntil('pod Ready', async () => ready(await h.api.get(PODS, 'journey', { namespace: 'default' })), { timeoutMs: 60_000, intervalMs: 100 });
  // The agent records its status step when the patch's answer is back, just after the server stored it.
  const trace: PodTrace = await pollUntil('journey complete on both sides', async () => {
    const tr = await fetchPodTrace(h.api, 'default', 'journey');
    return tr.waterfall.complete && tr.spans.some((s) => s.name === SPAN.agentStatus) ? tr : undefined;
  }, { timeoutMs: 10_000, intervalMs: 100 });
  assert.deepEqual(trace.warnings, []);

  const w = trace.waterfall;
  const top = w.rows.filter((r) => r.depth === 0 && !r.gap).map((r) => r.name);
  assert.deepEqual(top, [
    SPAN.apiCreate, SPAN.schedulerQueue, SPAN.schedulerSchedule, SPAN.schedulerBind,
    SPAN.agentAdmit, SPAN.agentSync, SPAN.agentObserve, SPAN.agentProbes, SPAN.agentStatus,
  ]);
  // Inside the sync that started the pod: volumes, the sandbox with its CNI ADD, then the container.
  const sync = w.rows.findIndex((r) => r.name === SPAN.agentSync);
  // The test runtime is fresh, so the image is usually pulled; `present` when it was kept.
  const image = (n: string): string => (n === SPAN.agentImagePresent ? SPAN.agentImagePull : n);
  const inside = w.rows.slice(sync + 1).filter((r, i, rows) => rows.slice(0, i + 1).every((x) => x.depth > 0)).map((r) => `${r.depth}:${image(r.name)}`);
  assert.deepEqual(inside, [
    `1:${SPAN.agentVolumes}`, `1:${SPAN.agentSandbox}`, `2:${SPAN.cniAdd}`, `1:${SPAN.agentImagePull}`,
    `1:${SPAN.agentContainerCreate}`, `1:${SPAN.agentContainerStart}`, `1:${SPAN.agentPostStart}`,
  ]);
  for (const r of w.rows) assert.ok(r.endMs >= r.startMs, `${r.name} has a duration`);
  for (const r of w.rows.filter((x) => !x.gap)) assert.ok(r.startMs >= w.startMs - 50 && r.endMs <= w.endMs + 50, `${r.name} lies in the journey`);
  assert.ok(w.rows.every((r) => !r.error), 'no step failed');
  const journey = w.endMs - w.startMs;
  assert.ok(Math.abs(w.topLevelSumMs - journey) <= 50, `steps and waits ${w.topLevelSumMs} ms vs journey ${journey} ms`);
  // Against the pod's own (1 s resolution) timestamps: the journey fits in them, give or take a second each end.
  const created = Date.parse(trace.timestamps.created!);
  const readyAt = Date.parse(trace.timestamps.ready!);
  assert.ok(w.startMs >= created - 1 && w.startMs < created + 1000, 'the journey starts in the creationTimestamp second');
  assert.ok(w.endMs >= readyAt - 1 && w.endMs < readyAt + 1000, "the journey ends in the Ready condition's second");
  assert.match(renderWaterfallSvg([{ title: 'journey', waterfall: w }]), /<\/svg>/);

  // The command itself, as a user runs it.
  const run = promisify(execFile);
  const out = await run(NODELET_DEV, ['trace', 'pod', 'default/journey', '--kubeconfig', h.kubeconfigPath], { timeout: 60_000 });
  for (const name of [...top, SPAN.cniAdd, 'waiting for the agent (watch)']) assert.ok(out.stdout.includes(name), `${name} in the waterfall:\n${out.stdout}`);
  assert.match(out.stdout, /journey: +\d/);
  const json = JSON.parse((await run(NODELET_DEV, ['trace', 'pod', 'default/journey', '--kubeconfig', h.kubeconfigPath, '--json'], { timeout: 60_000 })).stdout) as { spans: unknown[] };
  assert.equal(json.spans.length, trace.spans.length);
  // The waterfall in the test's output, for whoever reads the log.
  for (const line of out.stdout.trimEnd().split('\n')) t.diagnostic(line);
});
