// `nodelet cri` end to end: the real CLI (bin/nodelet-dev) against a private containerd from the
// lab harness. Checks what an operator sees: crictl's tables and messages, exit codes, and clear
// one-line errors for unknown IDs and an unreachable runtime.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '@nodelet/base';
import { requireRoot, startTestRuntime, type TestRuntime } from '@nodelet/lab-runtime/testing';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let rt: TestRuntime | undefined;
let dir = '';
let skip = '';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cri(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(NODELET, ['cri', ...args], { cwd: ROOT, env: { ...process.env, CONTAINER_RUNTIME_ENDPOINT: rt?.endpoint ?? '', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await cri(args);
  assert.equal(r.code, 0, `nodelet cri ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  if (!requireRoot({ skip: (m) => (skip = m ?? 'skipped') })) return;
  rt = await startTestRuntime({ name: 'cri-cli', bridge: { name: 'nla3', subnet: '10.231.3.0/24' } });
  dir = await mkdtemp(join(tmpdir(), 'nodelet-cri-cli-'));
});

after(async () => {
  await rt?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('operator journey: pull, runp, create, start, ps, pods, logs, exec, inspect, stats, stop, rm', async (t) => {
  if (!rt) return t.skip(skip);
  assert.match(await ok(['version']), /^Version: {2}0\.1\.0\nRuntimeName: {2}containerd\nRuntimeVersion: {2}\S+\nRuntimeApiVersion: {2}v1\n$/);
  assert.match(await ok(['pull', rt.images.busybox]), /^Image is up to date for sha256:[0-9a-f]{64}\n$/);
  const images = await ok(['images']);
  assert.match(images.split('\n')[0]!, /^IMAGE {3,}TAG {3,}IMAGE ID {3,}SIZE$/);
  assert.match(images, new RegExp(`${rt.registryHost.replace(/\./g, '\\.')}/busybox +latest +[0-9a-f]{13} +[\\d.]+[kM]B\\n`));

  const pod = join(dir, 'pod.yaml');
  const ctr = join(dir, 'ctr.json');
  await writeFile(pod, `metadata: {name: cli-demo, namespace: default, uid: cli-uid-${process.pid}, attempt: 0}\nlog_directory: ${dir}/logs\nlabels: {io.kubernetes.pod.name: cli-demo, io.kubernetes.pod.namespace: default}\nlinux: {}\n`);
  await writeFile(ctr, JSON.stringify({ metadata: { name: 'box' }, image: { image: rt.images.busybox }, command: ['/bin/sh', '-c', 'echo started; exec sleep 3600'], log_path: 'box.log', labels: { 'io.kubernetes.pod.name': 'cli-demo', 'io.kubernetes.pod.namespace': 'default' }, linux: {} }));
  const podId = (await ok(['runp', pod])).trim();
  assert.match(podId, /^[0-9a-f]{64}$/);
  t.after(() => cri(['rmp', '-f', podId]).then(() => undefined));
  const ctrId = (await ok(['create', podId, ctr, pod])).trim();
  assert.equal((await ok(['start', ctrId])).trim(), ctrId);

  const ps = (await ok(['ps'])).split('\n');
  assert.match(ps[0]!, /^CONTAINER {3,}IMAGE {3,}CREATED {3,}STATE {3,}NAME {3,}ATTEMPT {3,}POD ID {3,}POD {3,}NAMESPACE$/);
  assert.match(ps[1]!, new RegExp(`^${ctrId.slice(0, 13)} +\\S+ +(Less than a second|\\d+ seconds?) ago +Running +box +0 +${podId.slice(0, 13)} +cli-demo +default$`));
  assert.deepEqual((await ok(['ps', '-q', '--pod', podId])).trim().split('\n'), [ctrId]);
  const pods = (await ok(['pods', '--name', '^cli-'])).split('\n');
  assert.match(pods[1]!, new RegExp(`^${podId.slice(0, 13)} +.* ago +Ready +cli-demo +default +0 +\\(default\\)$`));

  const logs = await ok(['logs', ctrId]);
  assert.equal(logs, 'started\n');
  assert.match(await ok(['logs', '-t', ctrId]), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z started\n$/);

  const sync = await cri(['exec', '-s', ctrId, '/bin/sh', '-c', 'echo out; echo err >&2; exit 7']);
  assert.deepEqual([sync.code, sync.stdout, sync.stderr], [7, 'out\n', 'err\n']);
  const streamed = await cri(['exec', ctrId, '/bin/sh', '-c', 'echo streamed; exit 4']);
  assert.deepEqual([streamed.code, streamed.stdout], [4, 'streamed\n']);

  // exec -i: the end of our stdin is the command's end of input (SPDY half-close).
  const wc = await cri(['exec', '-i', ctrId, 'wc', '-l'], {}, 'a\nb\n');
  assert.deepEqual([wc.code, wc.stdout.trim()], [0, '2'], wc.stderr);

  // port-forward: one session, several connections, until interrupted.
  await ok(['exec', '-s', ctrId, '/bin/sh', '-c', 'mkdir -p /www && echo from-the-pod > /www/index.html && httpd -p 8080 -h /www']);
  const pf = spawn(NODELET, ['cri', 'port-forward', podId, '0:8080'], { cwd: ROOT, env: { ...process.env, CONTAINER_RUNTIME_ENDPOINT: rt.endpoint }, stdio: ['ignore', 'pipe', 'pipe'] });
  let pfOut = '';
  pf.stdout!.on('data', (d: Buffer) => (pfOut += d.toString()));
  const pfExit = new Promise<number | null>((r) => pf.once('exit', (code) => r(code)));
  try {
    const local = await pollUntil('port-forward to listen', () => Number(/Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(pfOut)?.[1]) || undefined, { timeoutMs: 30_000, intervalMs: 50 });
    const bodies = await Promise.all([1, 2, 3, 4, 5].map(() => fetch(`http://127.0.0.1:${local}/index.html`).then((r) => r.text())));
    assert.deepEqual(bodies, Array(5).fill('from-the-pod\n'));
  } finally {
    pf.kill('SIGINT');
  }
  assert.equal(await pfExit, 0);

  // attach -i: a second container whose main process reads stdin (stdin_once: our EOF closes it).
  const echoer = join(dir, 'echoer.json');
  await writeFile(echoer, JSON.stringify({ metadata: { name: 'echoer' }, image: { image: rt.images.busybox }, command: ['/bin/sh', '-c', 'while read l; do echo "echo:$l"; done; echo bye'], stdin: true, stdin_once: true, log_path: 'echoer.log', linux: {} }));
  const echoerId = (await ok(['create', podId, echoer, pod])).trim();
  await ok(['start', echoerId]);
  const attached = await cri(['attach', '-i', echoerId], {}, 'hello\n');
  assert.deepEqual([attached.code, attached.stdout], [0, 'echo:hello\nbye\n'], attached.stderr);
  await ok(['rm', '-f', echoerId]);

  const inspect = JSON.parse(await ok(['inspect', ctrId])) as { status: { state: string; logPath: string }; info: { info: object } };
  assert.equal(inspect.status.state, 'CONTAINER_RUNNING');
  assert.equal(typeof inspect.info.info, 'object', 'verbose info embedded as JSON');
  const stats = await ok(['stats', '-s', '1']);
  assert.match(stats, new RegExp(`^CONTAINER {3,}NAME {3,}CPU % {3,}MEM {3,}DISK {3,}INODES {3,}SWAP\\n${ctrId.slice(0, 13)} +box +\\d+\\.\\d\\d +`));
  assert.deepEqual(Object.keys(JSON.parse(await ok(['info']))).slice(0, 1), ['status']);

  assert.equal((await ok(['stop', ctrId])).trim(), ctrId);
  assert.match((await ok(['ps', '-a', '--state', 'exited'])).split('\n')[1]!, / Exited +box /);
  assert.equal((await ok(['rm', ctrId])).trim(), ctrId);
  assert.equal(await ok(['stopp', podId]), `Stopped sandbox ${podId}\n`);
  assert.equal(await ok(['rmp', podId]), `Removed sandbox ${podId}\n`);
});

test('errors are one clear line: unknown ID, malformed config, runtime down', async (t) => {
  if (!rt) return t.skip(skip);
  const unknown = await cri(['inspect', '0123456789abcdef']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^nodelet: cri ContainerStatus for container "0123456789abcdef" failed: .*not found\n$/);

  const bad = join(dir, 'bad.json');
  await writeFile(bad, '{"metadata": {"name": "x"}}');
  const badCfg = await cri(['runp', bad]);
  assert.match(badCfg.stderr, /^nodelet: pod sandbox config .*bad\.json needs metadata\.name, metadata\.namespace and metadata\.uid\n$/);

  const started = Date.now();
  const down = await cri(['-r', `unix://${dir}/nothing-here.sock`, 'ps']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /^nodelet: container runtime at unix:\/\/\/.*nothing-here\.sock is not reachable: .*ENOENT.*\n$/);
  assert.ok(Date.now() - started < 15_000, 'no hang');
});

test('crictl\'s other verbs against containerd: run, update, events/metricsp/metricdescs, config', async (t) => {
  if (!rt) return t.skip(skip);
  const pod = join(dir, 'run-pod.yaml');
  const ctr = join(dir, 'run-ctr.yaml');
  await writeFile(pod, `metadata: {name: cli-run, namespace: default, uid: cli-run-${process.pid}}\nlog_directory: ${dir}/run-logs\nlinux: {}\n`);
  await writeFile(ctr, `metadata: {name: sleeper}\nimage: {image: ${rt.images.busybox}}\ncommand: [sleep, '3600']\nlog_path: sleeper.log\nlinux: {}\n`);
  const ctrId = (await ok(['run', ctr, pod])).trim();
  assert.match(ctrId, /^[0-9a-f]{64}$/);
  const podId = (JSON.parse(await ok(['inspect', ctrId])) as { info: { info: { sandboxID: string } } }).info.info.sandboxID;
  t.after(() => cri(['rmp', '-f', podId]).then(() => undefined));
  assert.match((await ok(['ps', '--id', ctrId])).split('\n')[1]!, / Running +sleeper +0 /);

  // update: containerd applies the limits to the running container and keeps them in its spec; where
  // the container's cgroup is visible from here (cgroup v2), the kernel has them too.
  assert.equal(await ok(['update', '--memory', '67108864', '--cpu-quota', '50000', '--cpu-period', '100000', ctrId]), `${ctrId}\n`);
  const info = (JSON.parse(await ok(['inspect', ctrId])) as { info: { info: { pid: number; runtimeSpec: { linux: { resources: { memory: { limit: number }; cpu: { quota: number; period: number } } } } } } }).info.info;
  const res = info.runtimeSpec.linux.resources;
  assert.deepEqual([res.memory.limit, res.cpu.quota, res.cpu.period], [67108864, 50000, 100000]);
  const cg = /^0::(\/.*)$/m.exec(await readFile(`/proc/${info.pid}/cgroup`, 'utf8'))?.[1];
  if (cg && existsSync(`/sys/fs/cgroup${cg}/memory.max`)) {
    assert.equal(await readFile(`/sys/fs/cgroup${cg}/memory.max`, 'utf8'), '67108864\n');
    assert.equal(await readFile(`/sys/fs/cgroup${cg}/cpu.max`, 'utf8'), '50000 100000\n');
  }

  // containerd 1.6 has neither the event stream nor CRI metrics: one line each, exit 1.
  for (const [verb, rpc] of [['events', 'GetContainerEvents'], ['metricsp', 'ListPodSandboxMetrics'], ['metricdescs', 'ListMetricDescriptors']] as const) {
    const r = await cri([verb]);
    if (r.code === 0) continue; // a newer containerd implements it
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^nodelet: the runtime at \\S+ does not implement ${rpc}, so ${verb} has nothing to show .*\\n$`));
  }

  // config: the endpoint written by `config` is the one the next command uses.
  const cfg = join(dir, 'crictl.yaml');
  const withCfg = { CRI_CONFIG_FILE: cfg, CONTAINER_RUNTIME_ENDPOINT: '' };
  const set = await cri(['config', '--set', `runtime-endpoint=${rt.endpoint},timeout=10`], withCfg);
  assert.equal(set.code, 0, set.stderr);
  const { CONTAINER_RUNTIME_ENDPOINT: _drop, ...env } = process.env;
  const version = await new Promise<Result>((resolve) =>
    execFile(NODELET, ['cri', '-D', 'version'], { cwd: ROOT, env: { ...env, CRI_CONFIG_FILE: cfg } }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr })),
  );
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stderr, new RegExp(`using runtime endpoint ${rt.endpoint.replace(/[/.]/g, '\\$&')} \\(from ${cfg.replace(/[/.]/g, '\\$&')}\\)`));
  assert.match(version.stdout, /RuntimeName: {2}containerd/);
});
