// The exec bridge between a client WebSocket (kubectl's v5) and the runtime's SPDY streaming server
// (the SPDY fake, on loopback): close-stdin becomes a half-close, the status arrives after the
// output, resizes pass through, and a side that does not read pauses the other instead of growing
// the agent's buffers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeStreamingServer } from '@nodelet/cri-client/testing';
import { bridgeRemoteCommand, HIGH_WATER_BYTES } from './exec-bridge.js';

const FRAME = 64 * 1024;
/** Far more than loopback socket buffers hold, so only backpressure can stop the sender. */
const FLOOD = 96 * 1024 * 1024;

interface Rig {
  /** The agent's listening port (for a raw client). */
  port: number;
  /** The agent's side of the client connection (what the bridge writes to). */
  agentSide: WebSocket;
  /** kubectl's end. */
  client: WebSocket;
  streaming: FakeStreamingServer;
  frames: Buffer[];
  closed: Promise<number>;
}

async function rig(t: import('node:test').TestContext, flags = { stdin: true, stdout: true, stderr: true, tty: false }, protocol = 'v5.channel.k8s.io'): Promise<Rig> {
  const streaming = await FakeStreamingServer.start();
  const q = new URLSearchParams(Object.entries(flags).map(([k, v]): [string, string] => [k, String(v)]));
  const agentWss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has(protocol) ? protocol : false) });
  const srv = http.createServer();
  const agentSide = new Promise<WebSocket>((resolve) =>
    srv.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
      agentWss.handleUpgrade(req, socket, head, (ws) => {
        resolve(ws);
        void bridgeRemoteCommand({ client: ws, socket, start: async () => `${streaming.baseUrl}/exec/x?${q}`, flags, log: noopLogger });
      }),
    ),
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const client = new WebSocket(`ws://127.0.0.1:${(srv.address() as AddressInfo).port}/exec`, [protocol]);
  const frames: Buffer[] = [];
  client.on('message', (d: Buffer) => frames.push(d));
  const closed = new Promise<number>((r) => client.on('close', (code) => r(code)));
  t.after(async () => {
    client.terminate();
    for (const c of agentWss.clients) c.terminate();
    srv.closeAllConnections();
    srv.close();
    await streaming.close();
  });
  await new Promise((r) => client.once('open', r));
  return { port: (srv.address() as AddressInfo).port, agentSide: await agentSide, client, streaming, frames, closed };
}

const text = (frames: Buffer[], ch: number): string => Buffer.concat(frames.filter((f) => f[0] === ch).map((f) => f.subarray(1))).toString();

test('v5 close-stdin reaches the process as EOF; output, then the exit status, then a normal close', async (t) => {
  const r = await rig(t);
  r.streaming.handler = (s) =>
    s.onStdinEnd(() => {
      s.write(1, `${Buffer.concat(s.stdin).toString().split('\n').length - 1}\n`);
      s.write(2, 'warn\n');
      s.exit(3);
    });
  r.client.send(Buffer.from('\x00a\nb\n'));
  r.client.send(Buffer.from([255, 0]));
  assert.equal(await r.closed, 1000);
  assert.equal(text(r.frames, 1), '2\n');
  assert.equal(text(r.frames, 2), 'warn\n');
  const status = JSON.parse(text(r.frames, 3)) as { reason: string; details: { causes: { message: string }[] } };
  assert.equal(status.reason, 'NonZeroExitCode');
  assert.equal(status.details.causes[0]?.message, '3');
  assert.equal(r.frames.at(-1)?.[0], 3, 'the status is the last frame');
  assert.equal(r.streaming.sessions[0]?.protocol, 'v4.channel.k8s.io');
});

test('the connection ends right after the close frame; a client that has not answered it is not left waiting', async (t) => {
  const r = await rig(t);
  r.streaming.handler = (s) => {
    s.write(1, 'out\n');
    s.exit(0);
  };
  // A second session on a raw socket: like python-kubernetes 22.6 with the last frames stuck in its
  // TLS buffer, it never replies to the close frame; only the connection's end wakes it.
  const raw = net.connect(r.port, '127.0.0.1');
  t.after(() => raw.destroy());
  let got = Buffer.alloc(0);
  let ended = false;
  raw.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
  raw.on('end', () => (ended = true));
  raw.write(['GET /exec HTTP/1.1', 'Host: x', 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${Buffer.alloc(16, 7).toString('base64')}`, 'Sec-WebSocket-Protocol: v5.channel.k8s.io', '', ''].join('\r\n'));
  // Before: ws waited its 30 s close timeout for a reply that never came.
  await pollUntil('the connection to end after the close frame', () => ended, { timeoutMs: 5000, intervalMs: 10 });
  const body = got.subarray(got.indexOf('\r\n\r\n') + 4);
  // The last frame is a close (opcode 8) with code 1000.
  assert.deepEqual([...body.subarray(-4)], [0x88, 2, 0x03, 0xe8]);
  assert.ok(body.includes(Buffer.from('\x01out\n')));
});

test('tty: resize frames go to the resize stream; no stderr stream is opened', async (t) => {
  const r = await rig(t, { stdin: true, stdout: true, stderr: false, tty: true });
  r.streaming.handler = (s) => s.onStdin(() => s.exit(0));
  await pollUntil('session', () => r.streaming.sessions.length === 1, { timeoutMs: 5000, intervalMs: 5 });
  r.client.send(Buffer.from(`\x04${JSON.stringify({ Width: 120, Height: 40 })}`));
  await pollUntil('resize seen', () => (r.streaming.sessions[0]?.resizes.length ?? 0) === 1, { timeoutMs: 5000, intervalMs: 5 });
  r.client.send(Buffer.from('\x00x'));
  assert.equal(await r.closed, 1000);
  assert.deepEqual(r.streaming.sessions[0]?.resizes, [{ Width: 120, Height: 40 }]);
  assert.equal(r.streaming.sessions[0]?.stream('stderr'), undefined);
});

test('a runtime that cannot be reached fails the session with a Status on channel 3', async (t) => {
  const r = await rig(t);
  r.streaming.accepted = [];
  assert.equal(await r.closed, 1000);
  assert.match(text(r.frames, 3), /"status":"Failure".*refused/);
});

test('exec bridge: a client that stops reading stalls the runtime stream; the agent buffers at most the high-water mark', { timeout: 60_000 }, async (t) => {
  const r = await rig(t);
  r.client.pause(); // kubectl reads nothing
  let sent = 0;
  r.streaming.handler = (s) => {
    const out = s.stream('stdout')!;
    const chunk = Buffer.alloc(FRAME, 0x61);
    const pump = (): void => {
      while (sent < FLOOD) {
        sent += FRAME;
        if (!out.write(chunk)) return void out.once('drain', pump);
      }
    };
    pump();
  };
  let peak = 0;
  const watch = setInterval(() => (peak = Math.max(peak, r.agentSide.bufferedAmount)), 5);
  t.after(() => clearInterval(watch));
  let last = -1;
  await pollUntil('the runtime to stall', async () => {
    await new Promise((res) => setTimeout(res, 300));
    const stalled = sent === last && sent > 0;
    last = sent;
    return stalled;
  }, { timeoutMs: 30_000, intervalMs: 1 });
  clearInterval(watch);
  assert.ok(sent < FLOOD, `the runtime could send all ${FLOOD} bytes: nothing pushed back`);
  assert.ok(peak <= HIGH_WATER_BYTES + 2 * FRAME, `the agent buffered ${peak} bytes for the client`);
});

test('exec bridge: a runtime that stops reading stalls the client stdin the same way', { timeout: 60_000 }, async (t) => {
  const r = await rig(t);
  r.streaming.handler = (s) => s.stream('stdin')!.pause(); // the process does not read its stdin
  await pollUntil('session', () => r.streaming.sessions.length === 1, { timeoutMs: 5000, intervalMs: 5 });
  const frame = Buffer.alloc(FRAME, 0x61);
  frame[0] = 0;
  let sent = 0;
  let stalledSince = 0;
  while (sent < FLOOD) {
    if (r.client.bufferedAmount > 4 * FRAME) {
      stalledSince ||= Date.now();
      if (Date.now() - stalledSince > 1000) break;
      await new Promise((res) => setTimeout(res, 10));
      continue;
    }
    stalledSince = 0;
    r.client.send(frame);
    sent += FRAME;
  }
  assert.ok(sent < FLOOD, `the client could send all ${FLOOD} bytes: nothing pushed back`);
});
