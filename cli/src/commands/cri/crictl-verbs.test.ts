// `nodelet cri update|run|events|metricsp|metricdescs|config` in-process against FakeCriServer:
// flags → CRI requests, crictl's output, rollback of `run`, and one-line errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, setup } from './testing/run.js';
import { pollUntil } from '@nodelet/base';
import { resolveEndpoints } from './context.js';

test('update: crictl flags become LinuxContainerResources; the IDs are printed; bad values are refused', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  const r = await run(fake, ['update', '--cpu-share', '512', '--cpu-quota', '50000', '--cpu-period', '100000', '--memory', '268435456', '--cpuset-cpus', '0-1', ctrId]);
  assert.deepEqual([r.code, r.stdout], [0, `${ctrId}\n`], r.stderr);
  const req = fake.runtime.callsOf('UpdateContainerResources')[0] as { containerId: string; linux: Record<string, unknown> };
  assert.equal(req.containerId, ctrId);
  assert.deepEqual(
    [req.linux['cpuShares'], req.linux['cpuQuota'], req.linux['cpuPeriod'], req.linux['memoryLimitInBytes'], req.linux['cpusetCpus'], req.linux['cpusetMems']],
    ['512', '50000', '100000', '268435456', '0-1', ''],
  );
  const none = await run(fake, ['update', ctrId]);
  assert.deepEqual([none.code, none.stderr], [1, 'nodelet: nothing to update: give at least one of --cpu-share, --cpu-quota, --cpu-period, --memory, --cpuset-cpus, --cpuset-mems\n']);
  const bad = await run(fake, ['update', '--memory', '1g', ctrId]);
  assert.deepEqual([bad.code, bad.stderr], [1, 'nodelet: invalid --memory "1g": use a whole number of at least 0\n']);
  const missing = await run(fake, ['update', '--memory', '1', 'nope']);
  assert.match(missing.stderr, /^nodelet: cri UpdateContainerResources for container "nope" failed: .*not found\n$/);
});

test('run: sandbox, pull, create and start from the two files; the container ID is printed', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const r = await run(fake, ['run', '-r', 'runc', ctrFile, podFile]);
  assert.equal(r.code, 0, r.stderr);
  const ctrId = r.stdout.trim();
  assert.match(ctrId, /^[0-9a-f]{64}$/);
  assert.equal((fake.runtime.callsOf('RunPodSandbox')[0] as { runtimeHandler: string }).runtimeHandler, 'runc');
  assert.equal((fake.runtime.callsOf('PullImage')[0] as { image: { image: string } }).image.image, '127.0.0.1:5000/busybox:latest');
  assert.equal(fake.runtime.containers.get(ctrId)?.state, 'CONTAINER_RUNNING');
  await run(fake, ['run', '--no-pull', ctrFile, podFile]);
  assert.equal(fake.runtime.callsOf('PullImage').length, 1, '--no-pull pulls nothing');
});

test('run: a failed create removes the sandbox it made and reports the failure', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  fake.runtime.injectError('CreateContainer', 'INVALID_ARGUMENT', 'bad mount');
  const r = await run(fake, ['run', ctrFile, podFile]);
  assert.deepEqual([r.code, r.stderr], [1, 'nodelet: cri CreateContainer for container "app" in sandbox "' + (fake.runtime.callsOf('StopPodSandbox')[0] as { podSandboxId: string }).podSandboxId + '" failed: bad mount\n']);
  assert.equal(fake.runtime.sandboxes.size, 0, 'no sandbox left behind');
});

test('events, metricsp, metricdescs on a runtime without them say so in one line', async (t) => {
  const { fake } = await setup(t);
  for (const [verb, rpc] of [['events', 'GetContainerEvents'], ['metricsp', 'ListPodSandboxMetrics'], ['metricdescs', 'ListMetricDescriptors']] as const) {
    const r = await run(fake, [verb]);
    assert.equal(r.code, 1, verb);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^nodelet: the runtime at unix://\\S+ does not implement ${rpc}, so ${verb} has nothing to show \\(containerd 1\\.6 does not; newer runtimes do\\)\\n$`));
  }
  const badFormat = await run(fake, ['metricsp', '-o', 'table']);
  assert.equal(badFormat.stderr, 'nodelet: unsupported output format "table": use json, yaml\n');
});

test('config: --set, <key> <value>, --get and --list edit crictl\'s file and keep what else it holds', async (t) => {
  const { fake, dir } = await setup(t);
  const file = join(dir, 'crictl.yaml');
  await writeFile(file, '# written by hand\npull-image-on-create: true\ntimeout: 4\n');
  const c = ['-c', file];
  assert.equal((await run(fake, ['config', '--set', 'runtime-endpoint=unix:///run/x.sock,debug=true'], c)).code, 0);
  assert.equal((await run(fake, ['config', 'timeout', '9'], c)).code, 0);
  const text = await readFile(file, 'utf8');
  assert.match(text, /^# written by hand\npull-image-on-create: true\ntimeout: 9\nruntime-endpoint: unix:\/\/\/run\/x\.sock\ndebug: true\n$/);
  assert.equal((await run(fake, ['config', '--get', 'runtime-endpoint'], c)).stdout, 'unix:///run/x.sock\n');
  assert.equal((await run(fake, ['config', '--get', 'image-endpoint'], c)).stdout, '\n');
  assert.equal((await run(fake, ['config', '--list'], c)).stdout, 'KEY                 VALUE\nruntime-endpoint    unix:///run/x.sock\nimage-endpoint\ntimeout             9\ndebug               true\n');
  const unknown = await run(fake, ['config', '--set', 'pull-image-on-create=false'], c);
  assert.deepEqual([unknown.code, unknown.stderr], [1, 'nodelet: unknown config key "pull-image-on-create": use runtime-endpoint, image-endpoint, timeout, debug\n']);
  const badTimeout = await run(fake, ['config', 'timeout', '2s'], c);
  assert.equal(badTimeout.stderr, 'nodelet: invalid timeout "2s": use whole seconds\n');
  assert.match(await readFile(file, 'utf8'), /timeout: 9\n/, 'a refused setting changes nothing');
});

test('config file: debug: true is honoured like -D', async () => {
  // Before: `debug` was read from the file and ignored.
  const r = resolveEndpoints({}, {}, { read: () => 'runtime-endpoint: unix:///r.sock\ndebug: true\n', exists: () => true });
  assert.equal(r.debug, true);
  assert.equal(resolveEndpoints({ debug: true }, {}, { read: () => '', exists: () => true }).debug, true);
});

test('events: one JSON document per event as they come, until interrupted (exit 0)', async (t) => {
  const { fake } = await setup(t);
  fake.runtime.containerEvents = [
    { containerId: 'c1', containerEventType: 'CONTAINER_CREATED_EVENT', createdAt: '1764936000000000000' },
    { containerId: 'c1', containerEventType: 'CONTAINER_STARTED_EVENT', createdAt: '1764936001000000000' },
  ];
  // The command stops on SIGINT; nothing else in this test process listens for it.
  assert.equal(process.listenerCount('SIGINT'), 0);
  const watch = { stdout: '' };
  const running = run(fake, ['events'], [], watch);
  await pollUntil('both events printed', () => watch.stdout.includes('CONTAINER_STARTED_EVENT') || undefined, { timeoutMs: 10_000, intervalMs: 10 });
  process.emit('SIGINT');
  const r = await running;
  assert.equal(r.code, 0, r.stderr);
  const docs = r.stdout.trim().split(/\n(?=\{)/).map((d) => JSON.parse(d) as { containerId: string; containerEventType: string });
  assert.deepEqual(docs.map((d) => [d.containerId, d.containerEventType]), [['c1', 'CONTAINER_CREATED_EVENT'], ['c1', 'CONTAINER_STARTED_EVENT']]);
  assert.equal(process.listenerCount('SIGINT'), 0, 'the handler is removed');
});
