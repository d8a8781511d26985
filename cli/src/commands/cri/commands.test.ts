// `nodelet cri` commands in-process against FakeCriServer (a real gRPC server on a temp socket):
// flags → CRI requests, crictl's defaults, messages and exit codes. Output goes to buffers via `io`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeStreamingServer } from '@nodelet/cri-client/testing';
import { run, setup } from './testing/run.js';

test('runp/create/start print IDs; config files are read in crictl snake_case', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const runp = await run(fake, ['runp', '-r', 'runc', podFile]);
  assert.equal(runp.code, 0, runp.stderr);
  const podId = runp.stdout.trim();
  const req = fake.runtime.callsOf('RunPodSandbox')[0] as { config: { logDirectory: string; labels: Record<string, string> }; runtimeHandler: string };
  assert.equal(req.runtimeHandler, 'runc');
  assert.match(req.config.logDirectory, /logs$/);
  assert.equal(req.config.labels['tier'], 'front');
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  assert.match(ctrId, /^[0-9a-f]{64}$/);
  assert.equal((await run(fake, ['start', ctrId])).stdout, `${ctrId}\n`);
});

test('ps: running only by default, -a and --state widen it, -q prints full IDs', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  assert.equal((await run(fake, ['ps', '-q'])).stdout, '', 'created containers are not listed by default');
  assert.equal((await run(fake, ['ps', '-a', '-q'])).stdout, `${ctrId}\n`);
  assert.equal((await run(fake, ['ps', '-q', '--state', 'created'])).stdout, `${ctrId}\n`);
  const filter = fake.runtime.callsOf('ListContainers').at(-1) as { filter: { state: { state: string } } };
  assert.equal(filter.filter.state.state, 'CONTAINER_CREATED');
  await run(fake, ['start', ctrId]);
  const table = (await run(fake, ['ps'])).stdout.split('\n');
  assert.match(table[1]!, new RegExp(`^${ctrId.slice(0, 13)} +127\\.0\\.0\\.1:5000/busybox:latest +.* ago +Running +app +0 +${podId.slice(0, 13)} +web +default$`));
  assert.equal((await run(fake, ['ps', '-q', '--image', '127.0.0.1:5000/busybox'])).stdout, `${ctrId}\n`, '--image matches through ImageStatus');
  assert.equal((await run(fake, ['ps', '-q', '--name', '^nope$'])).stdout, '');
  const bad = await run(fake, ['ps', '--state', 'sleeping']);
  assert.deepEqual([bad.code, bad.stderr], [1, 'nodelet: invalid container state "sleeping": use created, running, exited or unknown\n']);
});

test('pods with label filter and -o json; inspectp embeds verbose info as JSON', async (t) => {
  const { fake, podFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const json = JSON.parse((await run(fake, ['pods', '--label', 'tier=front', '-o', 'json'])).stdout) as { items: { id: string; state: string }[] };
  assert.deepEqual(json.items.map((p) => p.id), [podId]);
  assert.equal((await run(fake, ['pods', '-q', '--label', 'tier=back'])).stdout, '');
  const doc = JSON.parse((await run(fake, ['inspectp', podId])).stdout) as { status: { id: string }; info: { info: { pid: number } } };
  assert.equal(doc.status.id, podId);
  assert.equal(doc.info.info.pid, 4242);
});

test('rm refuses a running container without -f; rm -f stops first; stop passes the grace period', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  await run(fake, ['start', ctrId]);
  const refused = await run(fake, ['rm', ctrId]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is running: stop it first .* or use rm -f/);
  assert.equal((await run(fake, ['rm', '-f', ctrId])).stdout, `${ctrId}\n`);
  assert.equal(fake.runtime.containers.size, 0);
  const c2 = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  await run(fake, ['start', c2]);
  await run(fake, ['stop', '-t', '5', c2]);
  assert.equal((fake.runtime.callsOf('StopContainer').at(-1) as { timeout: string }).timeout, '5');
  assert.equal((await run(fake, ['rmp', '-a'])).stdout, `Removed sandbox ${podId}\n`);
});

test('errors: unknown ID is NotFound naming it; an unreachable runtime is one clear line', async (t) => {
  const { fake } = await setup(t);
  const r = await run(fake, ['inspect', 'abc123']);
  assert.deepEqual([r.code, r.stderr], [1, 'nodelet: cri ContainerStatus for container "abc123" failed: an error occurred when try to find container "abc123": not found\n']);
  await fake.stop();
  const down = await run(fake, ['version']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /^nodelet: container runtime at unix:\/\/\/.* is not reachable: .*\n$/);
});

test('images, inspecti of a missing image, rmi prints Deleted per tag, imagefsinfo', async (t) => {
  const { fake } = await setup(t);
  const table = (await run(fake, ['images'])).stdout;
  assert.match(table, /^IMAGE {3,}TAG {3,}IMAGE ID {3,}SIZE\n127\.0\.0\.1:5000\/busybox +latest +[0-9a-f]{13} +2\.13MB\n$/);
  const missing = await run(fake, ['inspecti', 'nope:1']);
  assert.deepEqual([missing.code, missing.stderr], [1, 'nodelet: no such image "nope:1" present\n']);
  assert.equal((await run(fake, ['rmi', '127.0.0.1:5000/busybox:latest'])).stdout, 'Deleted: 127.0.0.1:5000/busybox:latest\n');
  const fs = JSON.parse((await run(fake, ['imagefsinfo'])).stdout) as { status: { imageFilesystems: unknown[] } };
  assert.equal(fs.status.imageFilesystems.length, 1);
  assert.match((await run(fake, ['pull', 'busybox'])).stdout, /^Image is up to date for sha256:[0-9a-f]{64}\n$/);
});

test('exec -s passes output and exit code through; streaming exec uses the v4 stream', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const streaming = await FakeStreamingServer.start();
  t.after(() => streaming.close());
  fake.runtime.streamingBaseUrl = streaming.baseUrl;
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  await run(fake, ['start', ctrId]);
  fake.runtime.execSync = (_id, cmd) => ({ stdout: `ran ${cmd.join(' ')}\n`, stderr: 'warn\n', exitCode: 3 });
  const sync = await run(fake, ['exec', '-s', '--timeout', '5', ctrId, 'ls', '-la']);
  assert.deepEqual([sync.code, sync.stdout, sync.stderr], [3, 'ran ls -la\n', 'warn\n'], 'options after the command belong to it');
  assert.equal((fake.runtime.callsOf('ExecSync').at(-1) as { timeout: string }).timeout, '5');
  streaming.handler = (s) => {
    s.write(1, 'streamed\n');
    s.exit(2);
  };
  const streamed = await run(fake, ['exec', ctrId, 'sh', '-c', 'x']);
  assert.deepEqual([streamed.code, streamed.stdout], [2, 'streamed\n']);
});

test('logs: tail, timestamps and stream selection from the CRI log file', async (t) => {
  const { fake, dir, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  await mkdir(join(dir, 'logs'), { recursive: true });
  await writeFile(
    join(dir, 'logs', 'app.log'),
    ['2026-12-02T10:00:00.000000001Z stdout F one', '2026-12-02T10:00:01.000000001Z stderr F two', '2026-12-02T10:00:02.000000001Z stdout P thr', '2026-12-02T10:00:02.100000001Z stdout F ee', ''].join('\n'),
  );
  const all = await run(fake, ['logs', ctrId]);
  assert.deepEqual([all.stdout, all.stderr], ['one\nthree\n', 'two\n']);
  assert.equal((await run(fake, ['logs', '--tail', '1', '-t', ctrId])).stdout, '2026-12-02T10:00:02.000000001Z three\n');
  assert.equal((await run(fake, ['logs', '-s', 'stderr', ctrId])).stderr, 'two\n');
  assert.equal((await run(fake, ['logs', '--since', '2026-12-02T10:00:01Z', ctrId])).stdout, 'three\n');
});

test('statsp on a runtime that refuses ListPodSandboxStats (containerd 1.6 without pod cgroups) sums the containers', async (t) => {
  const { fake, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  await run(fake, ['start', ctrId]);
  fake.runtime.injectError('ListPodSandboxStats', 'UNKNOWN', 'failed to get cgroup metrics for sandbox because cgroupPath is empty', 2);
  const r = await run(fake, ['statsp', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /the runtime has no pod sandbox stats .*cgroupPath is empty.*; showing the sum of each pod's running containers/);
  const stats = JSON.parse(r.stdout).stats as Array<{ attributes: { id: string }; linux: { memory: { workingSetBytes: { value: string } } } }>;
  assert.deepEqual(stats.map((s) => s.attributes.id), [podId]);
  assert.equal(stats[0]!.linux.memory.workingSetBytes.value, '1048576'); // the fake's one container
  const table = await run(fake, ['statsp', '-s', '1']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^POD\s+POD ID\s+CPU %\s+MEM\nweb\s+[0-9a-f]{13}\s+\d+\.\d\d\s+1\.049MB\n$/);
});

test('logs -p: the previous attempt\'s file in the kubelet layout, or a clear error', async (t) => {
  const { previousLogPath } = await import('./streams.js');
  assert.equal(previousLogPath('/var/log/pods/ns_p_u/c/3.log', 3, 'c'), '/var/log/pods/ns_p_u/c/2.log');
  assert.equal(previousLogPath('/var/log/pods/ns_p_u/c/10.log', 10, 'c'), '/var/log/pods/ns_p_u/c/9.log');
  assert.throws(() => previousLogPath('/var/log/pods/ns_p_u/c/0.log', 0, 'c'), /previous terminated container "c" not found/);
  const { fake, podFile, ctrFile } = await setup(t);
  const podId = (await run(fake, ['runp', podFile])).stdout.trim();
  const ctrId = (await run(fake, ['create', podId, ctrFile, podFile])).stdout.trim();
  const r = await run(fake, ['logs', '-p', ctrId]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /previous terminated container ".*" not found/);
});
