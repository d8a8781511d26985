// cri-client against a real containerd 1.6 (lab harness): sandbox and container lifecycle, list
// filters, verbose status (netns), exec (sync and streaming, tty + resize), logs, stats, port-forward,
// idempotent stop/remove and NotFound with the ID.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { hasCode, pollUntil } from '@nodelet/base';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { execStream, flagsOf, netnsPathFromSandboxInfo, openStream, PortForwardSession, portForwardStream, readCriLog, type CriLogEntry } from '@nodelet/cri-client';
import { containerConfig, podConfig, startEnv, TEST_LABEL, type Env } from './helpers.js';

let env: Env | undefined;
let skip = '';

before(async (t) => {
  if (!requireRoot({ skip: (m) => (skip = m ?? 'skipped') })) return;
  env = await startEnv(t as never, 'cri-lifecycle', 'nla0', '10.231.0.0/24');
  await env.cri.image.pullImage({ image: { image: env.rt.images.busybox } });
});

function need(t: { skip(m: string): void }): Env | undefined {
  if (!env) t.skip(skip || 'runtime not started');
  return env;
}

function collect(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

test('sandbox + container lifecycle, exec, logs, stats, idempotent stop/remove, NotFound', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, rt, logDir } = e;
  const pod = podConfig('life', logDir);

  // 1. Sandbox: ready, an IP from our subnet, a netns file from verbose info.
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: pod });
  const sst = await cri.runtime.podSandboxStatus({ podSandboxId, verbose: true });
  assert.equal(sst.status?.state, 'SANDBOX_READY');
  assert.match(sst.status?.network?.ip ?? '', /^10\.231\.0\.\d+$/);
  const netns = netnsPathFromSandboxInfo(sst);
  assert.ok(netns && existsSync(netns), `netns path ${netns} exists`);

  // 2. Container: create, start, status, list filters.
  const script = 'echo hello; echo oops >&2; printf partial; sleep 0.2; echo " line"; exec sleep 3600';
  const cfg = containerConfig('main', rt.images.busybox, ['/bin/sh', '-c', script]);
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: cfg, sandboxConfig: pod });
  assert.equal((await cri.runtime.containerStatus({ containerId })).status?.state, 'CONTAINER_CREATED');
  await cri.runtime.startContainer({ containerId });
  const cst = await cri.runtime.containerStatus({ containerId, verbose: true });
  assert.equal(cst.status?.state, 'CONTAINER_RUNNING');
  assert.equal(cst.status?.metadata?.name, 'main');
  assert.ok(cst.info['info'], 'verbose info present');

  const byPod = await cri.runtime.listContainers({ filter: { podSandboxId } });
  assert.deepEqual(byPod.containers.map((c) => c.id), [containerId]);
  const byState = await cri.runtime.listContainers({ filter: { podSandboxId, state: { state: 'CONTAINER_EXITED' } } });
  assert.equal(byState.containers.length, 0);
  const byLabel = await cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.container.name': 'main', ...TEST_LABEL } } });
  assert.ok(byLabel.containers.some((c) => c.id === containerId));
  const byIdPrefix = await cri.runtime.listContainers({ filter: { id: containerId.slice(0, 13) } });
  assert.deepEqual(byIdPrefix.containers.map((c) => c.id), [containerId]);
  const pods = await cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': pod.metadata!.uid! } } });
  assert.deepEqual(pods.items.map((p) => p.id), [podSandboxId]);
  const readyPods = await cri.runtime.listPodSandbox({ filter: { id: podSandboxId, state: { state: 'SANDBOX_READY' } } });
  assert.equal(readyPods.items.length, 1);

  // 3. Logs: CRI log file with partial lines joined.
  const logPath = cst.status!.logPath;
  const entries = await pollUntil('the container log lines', async () => {
    const got: CriLogEntry[] = [];
    for await (const en of readCriLog(logPath)) got.push(en);
    return got.some((x) => x.content === 'partial line') ? got : undefined;
  }, { timeoutMs: 10_000, intervalMs: 50 });
  assert.deepEqual(entries.filter((x) => x.stream === 'stdout').map((x) => x.content), ['hello', 'partial line']);
  assert.deepEqual(entries.filter((x) => x.stream === 'stderr').map((x) => x.content), ['oops']);
  const tail = [];
  for await (const en of readCriLog(logPath, { tail: 1, stream: 'stdout' })) tail.push(en.content);
  assert.deepEqual(tail, ['partial line']);
  await cri.runtime.reopenContainerLog({ containerId });

  // 4. ExecSync: output and exit codes.
  const hi = await cri.runtime.execSync({ containerId, cmd: ['/bin/echo', 'hi'], timeout: '10' });
  assert.equal(hi.stdout.toString(), 'hi\n');
  assert.equal(hi.exitCode, 0);
  const three = await cri.runtime.execSync({ containerId, cmd: ['/bin/sh', '-c', 'echo e >&2; exit 3'], timeout: '10' });
  assert.equal(three.exitCode, 3);
  assert.equal(three.stderr.toString(), 'e\n');

  // 5. Streaming exec over SPDY: separate stdout/stderr and the exit code.
  const out = collect();
  const err = collect();
  const r = await execStream(cri, { containerId, cmd: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'], stdout: true, stderr: true }, { stdout: out.stream, stderr: err.stream });
  assert.deepEqual([r.exitCode, out.text(), err.text()], [3, 'out\n', 'err\n']);

  // 5b. A command that cannot be started.
  await assert.rejects(execStream(cri, { containerId, cmd: ['/no/such/binary'], stdout: true, stderr: true }), (er: Error) => {
    assert.ok(hasCode(er, 'ERR_INTERNAL'));
    assert.match(er.message, /^remote command failed: .*"\/no\/such\/binary": stat \/no\/such\/binary: no such file or directory/);
    return true;
  });

  // 5c. stdin with an end: our half-close is the process's EOF, so `wc -l` and `cat` finish by
  //     themselves; 4 MiB through cat come back intact.
  const wc = collect();
  const lines = new PassThrough();
  lines.end('a\nb\n');
  const wr = await execStream(cri, { containerId, cmd: ['wc', '-l'], stdin: true, stdout: true, stderr: true }, { stdin: lines, stdout: wc.stream, stderr: collect().stream });
  assert.deepEqual([wr.exitCode, wc.text().trim()], [0, '2']);
  const big = Buffer.alloc(4 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
  const wcIn = new PassThrough();
  wcIn.end(big);
  const wcOut = collect();
  await execStream(cri, { containerId, cmd: ['wc', '-c'], stdin: true, stdout: true, stderr: false }, { stdin: wcIn, stdout: wcOut.stream });
  assert.equal(wcOut.text().trim(), String(big.length), 'every stdin byte reached the process');
  // Output only, ended by the runtime's reset of every stream: the last bytes still arrive.
  const bulk = collect();
  await execStream(cri, { containerId, cmd: ['sh', '-c', 'head -c 4194304 /dev/zero | tr "\\0" a'], stdin: false, stdout: true, stderr: true }, { stdout: bulk.stream, stderr: collect().stream });
  assert.equal(bulk.text().length, 4 * 1024 * 1024);
  const catIn = new PassThrough();
  catIn.end(big);
  const catOut = new PassThrough();
  const catChunks: Buffer[] = [];
  catOut.on('data', (c: Buffer) => catChunks.push(c));
  const cr = await execStream(cri, { containerId, cmd: ['cat'], stdin: true, stdout: true, stderr: false }, { stdin: catIn, stdout: catOut });
  assert.equal(cr.exitCode, 0);
  const echoed = Buffer.concat(catChunks);
  assert.equal(echoed.length, big.length, 'cat echoed every byte');
  assert.ok(echoed.equals(big), `cat echoed the bytes in order (first difference at ${echoed.findIndex((b, i) => b !== big[i])})`);

  // 6. Interactive tty exec: the initial size and a later resize reach the tty, stdin is delivered.
  //    The runtime applies a size asynchronously, so we ask again (a newline prints `stty size`)
  //    until it shows. (busybox `stty size` must write to the tty itself: no $(…).)
  const tty = collect();
  const stdin = new PassThrough();
  const ttyScript = 'while read x; do [ "$x" = q ] && exit 0; stty size; done';
  const { url } = await cri.runtime.exec({ containerId, cmd: ['/bin/sh', '-c', ttyScript], tty: true, stdin: true, stdout: true });
  const session = await openStream(url, { stdin, stdout: tty.stream, size: { width: 101, height: 37 } });
  const untilShown = (what: string): Promise<true> =>
    pollUntil(`"${what}" on the terminal`, async () => {
      if (tty.text().includes(what)) return true;
      stdin.write('\r');
      return undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 }).catch((er: unknown) => {
      throw new Error(`${String(er)}; the terminal showed ${JSON.stringify(tty.text())}`);
    });
  await untilShown('37 101');
  session.resize({ width: 120, height: 50 });
  await untilShown('50 120');
  stdin.write('q\r');
  const tr = await session.done;
  assert.equal(tr.exitCode, 0);

  // 7. Stats.
  const cs = await cri.runtime.containerStats({ containerId });
  assert.equal(cs.stats?.attributes?.id, containerId);
  assert.ok(Number(cs.stats?.memory?.workingSetBytes?.value ?? 0) > 0, 'memory working set reported');
  const lcs = await cri.runtime.listContainerStats({ filter: { podSandboxId } });
  assert.deepEqual(lcs.stats.map((s) => s.attributes?.id), [containerId]);
  const ps = await cri.runtime.podSandboxStats({ podSandboxId });
  assert.equal(ps.stats?.attributes?.id, podSandboxId);
  const lps = await cri.runtime.listPodSandboxStats({ filter: { id: podSandboxId } });
  assert.equal(lps.stats.length, 1);
  await cri.runtime.updateContainerResources({ containerId, linux: { cpuShares: '512' } });

  // 8. Stop (twice: idempotent), exited status, remove (twice), NotFound naming the ID.
  await cri.runtime.stopContainer({ containerId, timeout: '0' });
  await cri.runtime.stopContainer({ containerId, timeout: '0' });
  const exited = await cri.runtime.containerStatus({ containerId });
  assert.equal(exited.status?.state, 'CONTAINER_EXITED');
  assert.notEqual(exited.status?.finishedAt, '0');
  await cri.runtime.removeContainer({ containerId });
  await cri.runtime.removeContainer({ containerId });
  await assert.rejects(cri.runtime.containerStatus({ containerId }), (er: Error) => {
    assert.ok(hasCode(er, 'ERR_NOT_FOUND'), er.message);
    assert.ok(er.message.includes(containerId), er.message);
    return true;
  });
  await cri.runtime.stopPodSandbox({ podSandboxId });
  await cri.runtime.stopPodSandbox({ podSandboxId });
  assert.equal((await cri.runtime.podSandboxStatus({ podSandboxId })).status?.state, 'SANDBOX_NOTREADY');
  await cri.runtime.removePodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
  await assert.rejects(cri.runtime.podSandboxStatus({ podSandboxId }), (er: Error) => hasCode(er, 'ERR_NOT_FOUND') && er.message.includes(podSandboxId));
});

test('port-forward: many parallel connections over one session; a refused port fails only its own', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, rt, logDir } = e;
  const pod = podConfig('pf', logDir);
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: pod });
  const cfg = containerConfig('srv', rt.images.busybox, ['/bin/sh', '-c', 'mkdir -p /www && echo hello-from-pod > /www/index.html && exec httpd -f -p 8080 -h /www']);
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: cfg, sandboxConfig: pod });
  await cri.runtime.startContainer({ containerId });

  // One connection per session (the one-shot helper) until the server listens.
  const get = (port: number): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const c = connect(port, '127.0.0.1');
      let s = '';
      c.on('data', (d) => (s += d.toString()));
      c.on('end', () => resolve(s));
      c.on('error', reject);
      c.write('GET /index.html HTTP/1.0\r\n\r\n');
      setTimeout(() => c.destroy(), 5_000).unref();
    });
  const once = createServer({ allowHalfOpen: true }, (sock) => {
    portForwardStream(cri, { podSandboxId, port: 8080 }, sock).catch(() => sock.destroy());
  });
  await new Promise<void>((resolve) => once.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => once.close(() => resolve())));
  await pollUntil('httpd through a forwarded port', async () => ((await get((once.address() as AddressInfo).port).catch(() => '')).includes('hello-from-pod') ? true : undefined), { timeoutMs: 20_000, intervalMs: 50 });

  // Then one session, as kubectl and crictl keep it: 20 connections at once, and a closed port.
  const { url } = await cri.runtime.portForward({ podSandboxId, port: [8080] });
  const session = await PortForwardSession.dial(url);
  t.after(() => session.destroy());
  const errors: string[] = [];
  const local = createServer({ allowHalfOpen: true }, (sock) => {
    session.forward(8080, sock).catch((er: Error) => errors.push(er.message));
  });
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => local.close(() => resolve())));
  const port = (local.address() as AddressInfo).port;
  const answers = await Promise.all(Array.from({ length: 20 }, () => get(port)));
  assert.ok(answers.every((a) => a.includes('hello-from-pod')), `answers: ${JSON.stringify(answers.filter((a) => !a.includes('hello-from-pod')))}`);
  assert.deepEqual(errors, []);
  const refused = new PassThrough();
  await assert.rejects(session.forward(9, refused), /an error occurred forwarding to port 9: .*(refused|connect)/);
  assert.ok((await get(port)).includes('hello-from-pod'), 'the session still forwards after a refused connection');
  await cri.runtime.stopPodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
});

test('attach: our stdin reaches the container process and its stdout comes back', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, rt, logDir } = e;
  const pod = podConfig('attach', logDir);
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: pod });
  const cfg = containerConfig('echoer', rt.images.busybox, ['/bin/sh', '-c', 'while read l; do echo "echo:$l"; done'], { stdin: true });
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: cfg, sandboxConfig: pod });
  await cri.runtime.startContainer({ containerId });

  const out = collect();
  const stdin = new PassThrough();
  const attachReq = { containerId, stdin: true, stdout: true, stderr: true };
  const { url } = await cri.runtime.attach(attachReq);
  const session = await openStream(url, { stdin, stdout: out.stream }, flagsOf(attachReq));
  await pollUntil('the echoed line', async () => {
    if (out.text().includes('echo:ping')) return true;
    stdin.write('ping\n');
    return undefined;
  }, { timeoutMs: 10_000, intervalMs: 50 });
  session.close();
  await session.done;
  // Detaching leaves the container running.
  assert.equal((await cri.runtime.containerStatus({ containerId })).status?.state, 'CONTAINER_RUNNING');
  await cri.runtime.stopPodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
});
