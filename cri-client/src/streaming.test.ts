import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { FakeCriServer, FakeStreamingServer } from '@nodelet/cri-client/testing';
import { createCriClient, execStream, exitCodeFromStatus, openStream, toWebSocketUrl } from './index.js';

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
  return { fake, streaming, cri, containerId };
}

function sink(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let s = '';
  stream.on('data', (d: Buffer) => (s += d.toString()));
  return { stream, text: () => s };
}

test('exec stream: stdout/stderr demultiplexed, exit code from the v4 status', async (t) => {
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

test('interactive: stdin frames on channel 0, resize JSON on channel 4', async (t) => {
  const { streaming, cri, containerId } = await setup(t);
  streaming.handler = (s) => s.onStdin((d) => (d.toString() === 'q' ? s.exit(0) : s.write(1, d)));
  const { url } = await cri.runtime.exec({ containerId, cmd: ['sh'], tty: true, stdin: true, stdout: true });
  const stdin = new PassThrough();
  const out = sink();
  const session = await openStream(url, { stdin, stdout: out.stream, size: { width: 80, height: 24 } });
  session.resize({ width: 100, height: 30 });
  stdin.write('echo');
  stdin.write('q');
  assert.equal((await session.done).exitCode, 0);
  assert.equal(out.text(), 'echo');
  assert.deepEqual(streaming.sessions[0]?.resizes, [{ Width: 80, Height: 24 }, { Width: 100, Height: 30 }]);
});

test('a runtime that refuses our subprotocols gives a clear error', async (t) => {
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
  assert.equal(toWebSocketUrl('http://127.0.0.1:3456/exec/abc'), 'ws://127.0.0.1:3456/exec/abc');
  assert.equal(toWebSocketUrl('/exec/abc'), 'ws://127.0.0.1:10250/exec/abc');
  assert.equal(toWebSocketUrl('https://h:1/x'), 'wss://h:1/x');
});
