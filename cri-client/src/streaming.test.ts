import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { FakeCriServer, FakeStreamingServer } from '@nodelet/cri-client/testing';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { completeStreamUrl, createCriClient, execStream, exitCodeFromStatus, openStream, PortForwardSession } from './index.js';

async function setup(t: import('node:test').TestContext) {
  const fake = await FakeCriServer.start();
  const streaming = await FakeStreamingServer.start();
  fake.runtime.streamingBaseUrl = streaming.baseUrl;
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(async () => {
    cri.close();
    await streaming.close();
    await fake.close();
  });
  fake.runtime.addImage('busybox');
  const pod = { metadata: { name: 'p', namespace: 'n', uid: 'u' } };
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: pod });
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: { metadata: { name: 'c' }, image: { image: 'busybox' } } });
  await cri.runtime.startContainer({ containerId });
  return { fake, streaming, cri, containerId, podSandboxId };
}

/** Two ends of a loopback TCP connection. */
async function socketPair(t: import('node:test').TestContext): Promise<[Socket, Socket]> {
  const srv = createServer({ allowHalfOpen: true });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => srv.once('connection', r));
  const mine = connect((srv.address() as AddressInfo).port, '127.0.0.1');
  const theirs = await accepted;
  srv.close();
  t.after(() => {
    mine.destroy();
    theirs.destroy();
  });
  return [mine, theirs];
}

function sink(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let s = '';
  stream.on('data', (d: Buffer) => (s += d.toString()));
  return { stream, text: () => s };
}

test('exec over SPDY: stdout/stderr demultiplexed, exit code from the v4 status', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = (s) => {
    s.write(1, 'out\n');
    s.write(2, 'err\n');
    s.exit(3);
  };
  const out = sink();
  const err = sink();
  const r = await execStream(cri, { containerId, cmd: ['x'], stdout: true, stderr: true }, { stdout: out.stream, stderr: err.stream });
  assert.deepEqual(r, { exitCode: 3, statusReceived: true });
  assert.equal(out.text(), 'out\n');
  assert.equal(err.text(), 'err\n');
  assert.equal(streaming.sessions[0]?.protocol, 'v4.channel.k8s.io');
  assert.equal(streaming.sessions[0]?.kind, 'exec');
});

test('interactive: stdin on its stream, resize JSON on the resize stream', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = (s) => s.onStdin((d) => (d.toString() === 'q' ? s.exit(0) : s.write(1, d)));
  const { url } = await cri.runtime.exec({ containerId, cmd: ['sh'], tty: true, stdin: true, stdout: true });
  const stdin = new PassThrough();
  const out = sink();
  const session = await openStream(url, { stdin, stdout: out.stream, size: { width: 80, height: 24 } });
  session.resize({ width: 100, height: 30 });
  stdin.write('echo');
  await new Promise((r) => setTimeout(r, 20)); // two separate stdin frames
  stdin.write('q');
  assert.equal((await session.done).exitCode, 0);
  assert.equal(out.text(), 'echo');
  assert.deepEqual(streaming.sessions[0]?.resizes, [{ Width: 80, Height: 24 }, { Width: 100, Height: 30 }]);
});

test('the end of stdin reaches the runtime as a half-close (cat, wc -l end by themselves)', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = (s) => {
    s.onStdinEnd(() => {
      s.write(1, `${Buffer.concat(s.stdin).toString().split('\n').length - 1}\n`);
      s.exit(0);
    });
  };
  const out = sink();
  const stdin = new PassThrough();
  stdin.end('a\nb\n');
  const r = await execStream(cri, { containerId, cmd: ['wc', '-l'], stdin: true, stdout: true, stderr: true }, { stdin, stdout: out.stream, stderr: sink().stream });
  assert.equal(r.exitCode, 0);
  assert.equal(out.text(), '2\n');
  assert.equal(streaming.sessions[0]?.stdinEnded, true);
});

test('port-forward: connections share one session; a failed one reports the error stream and spares the others', async (t) => {
  const { streaming, cri, podSandboxId } = await setup(t);
  streaming.portForwardHandler = (port, data, error) => {
    if (port === 1) {
      error.end('dial tcp4 127.0.0.1:1: connect: connection refused');
      data.end();
      return;
    }
    data.pipe(data).on('finish', () => error.end());
  };
  const { url } = await cri.runtime.portForward({ podSandboxId, port: [] });
  const session = await PortForwardSession.dial(url);
  t.after(() => session.destroy());
  const conns = await Promise.all(Array.from({ length: 5 }, () => socketPair(t)));
  const echoed = conns.map(([mine, theirs], i) => {
    const forwarded = session.forward(8080, theirs);
    const got: Buffer[] = [];
    mine.on('data', (c: Buffer) => got.push(c));
    mine.end(`hello ${i}`);
    return Promise.all([forwarded, new Promise((r) => mine.once('end', r))]).then(() => Buffer.concat(got).toString());
  });
  const [, refusedSide] = await socketPair(t);
  await assert.rejects(session.forward(1, refusedSide), /forwarding to port 1: dial tcp4 127\.0\.0\.1:1: connect: connection refused/);
  assert.deepEqual(await Promise.all(echoed), ['hello 0', 'hello 1', 'hello 2', 'hello 3', 'hello 4']);
});

test('a runtime that refuses our protocols gives a clear error', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.accepted = ['v5.channel.k8s.io'];
  await assert.rejects(execStream(cri, { containerId, cmd: ['x'], stdout: true }), /streaming server refused .*HTTP 403/);
});

test('a failure status other than a non-zero exit rejects with its message', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = (s) => s.fail('executable file not found in $PATH');
  await assert.rejects(execStream(cri, { containerId, cmd: ['nope'], stdout: true }), /remote command failed: executable file not found/);
});

test('abort closes the stream and rejects with AbortError', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = () => {}; // never ends
  const ac = new AbortController();
  const p = execStream(cri, { containerId, cmd: ['sleep'], stdout: true }, { signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(p, { name: 'AbortError' });
});

test('status parsing and URL completion', () => {
  assert.equal(exitCodeFromStatus('{"metadata":{},"status":"Success"}', 'v4.channel.k8s.io'), 0);
  assert.equal(exitCodeFromStatus('', 'channel.k8s.io'), 0);
  assert.throws(() => exitCodeFromStatus('boom', 'channel.k8s.io'), /boom/);
  assert.equal(completeStreamUrl('http://127.0.0.1:3456/exec/abc'), 'http://127.0.0.1:3456/exec/abc');
  assert.equal(completeStreamUrl('/exec/abc'), 'http://127.0.0.1:10250/exec/abc');
});
