// SPDY/3.1 framing and sessions: frame round trips, the dictionary-primed header codec (also
// against plain zlib with the dictionary, as Go's compress/zlib does it), half-close, RST_STREAM,
// PING, GOAWAY, window updates and both kinds of backpressure, over real loopback sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { deflateSync, inflateSync, constants as zc } from 'node:zlib';
import { pollUntil } from '@nodelet/base';
import { encodeFrame, FrameReader, HeaderCodec, headerValue, RstStatus, SPDY3_DICTIONARY, SpdyConnection, type Frame, type SpdyStream } from './index.js';

test('the dictionary is the SPDY/3 one (length and digest)', () => {
  assert.equal(SPDY3_DICTIONARY.length, 1423);
  assert.equal(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex'), '51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
});

test('every frame type survives encode → parse, split at every byte boundary', () => {
  const tx = new HeaderCodec();
  const frames: Frame[] = [
    { type: 'syn_stream', streamId: 1, associatedId: 0, priority: 3, fin: false, unidirectional: true, headers: { streamtype: ['error'], port: ['8080'] } },
    { type: 'syn_reply', streamId: 1, fin: true, headers: {} },
    { type: 'headers', streamId: 3, fin: false, headers: { multi: ['a', 'b'] } },
    { type: 'data', streamId: 1, fin: true, data: Buffer.from('hello') },
    { type: 'rst_stream', streamId: 5, status: RstStatus.CANCEL },
    { type: 'settings', entries: [{ id: 7, value: 1 << 20, flags: 0 }] },
    { type: 'ping', id: 7 },
    { type: 'goaway', lastGoodStreamId: 9, status: 1 },
    { type: 'window_update', streamId: 0, delta: 65536 },
  ];
  const wire = Buffer.concat(frames.map((f) => encodeFrame(f, tx)));
  const reader = new FrameReader(new HeaderCodec());
  const got: Frame[] = [];
  for (let i = 0; i < wire.length; i++) got.push(...reader.push(wire.subarray(i, i + 1)));
  assert.deepEqual(got, frames);
});

test('header blocks are one zlib stream primed with the dictionary (what Go compress/zlib reads)', () => {
  const tx = new HeaderCodec();
  const first = encodeFrame({ type: 'syn_stream', streamId: 1, associatedId: 0, priority: 0, fin: false, unidirectional: false, headers: { streamtype: ['stdin'] } }, tx);
  const block = first.subarray(18);
  // FDICT set and the dictionary's Adler-32 as DICTID: a peer without the dictionary cannot read it.
  assert.equal(block[1]! & 0x20, 0x20);
  assert.equal(inflateSync(block, { dictionary: SPDY3_DICTIONARY, finishFlush: zc.Z_SYNC_FLUSH }).readUInt32BE(0), 1);
  assert.throws(() => inflateSync(block, { finishFlush: zc.Z_SYNC_FLUSH }));
  // The other way round: a block compressed by plain zlib with the dictionary decodes.
  const raw = Buffer.from([0, 0, 0, 1, 0, 0, 0, 4, ...Buffer.from('port'), 0, 0, 0, 2, ...Buffer.from('80')]);
  const peer = deflateSync(raw, { dictionary: SPDY3_DICTIONARY, flush: zc.Z_SYNC_FLUSH });
  assert.deepEqual(new HeaderCodec().decompress(peer), { port: ['80'] });
  // Later blocks continue the same stream (they are not valid alone) and are smaller.
  const second = encodeFrame({ type: 'syn_stream', streamId: 3, associatedId: 0, priority: 0, fin: false, unidirectional: false, headers: { streamtype: ['stdout'] } }, tx);
  assert.ok(second.length < first.length);
  const rx = new FrameReader(new HeaderCodec());
  assert.deepEqual(rx.push(Buffer.concat([first, second])).map((f) => 'headers' in f && headerValue(f.headers, 'StreamType')), ['stdin', 'stdout']);
});

test('malformed input is a protocol error, not a crash', () => {
  const bad = (buf: Buffer): void => assert.throws(() => new FrameReader(new HeaderCodec()).push(buf), /spdy:/);
  bad(Buffer.from([0x80, 0x02, 0, 1, 0, 0, 0, 0])); // version 2
  bad(Buffer.from([0x80, 0x03, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1])); // RST_STREAM too short
  bad(Buffer.concat([Buffer.from([0x80, 0x03, 0, 2, 0, 0, 0, 8, 0, 0, 0, 1]), Buffer.from('garbage!')])); // not zlib
  const upper = deflateSync(Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]), { dictionary: SPDY3_DICTIONARY, flush: zc.Z_SYNC_FLUSH });
  assert.throws(() => new HeaderCodec().decompress(upper), /not lower-case/);
  // Unknown control types are skipped.
  assert.deepEqual(new FrameReader(new HeaderCodec()).push(Buffer.from([0x80, 0x03, 0, 0x42, 0, 0, 0, 1, 9])), [{ type: 'unknown', frameType: 0x42 }]);
});

interface Pair {
  client: SpdyConnection;
  server: SpdyConnection;
  clientSocket: Socket;
  serverSocket: Socket;
  accepted: SpdyStream[];
}

async function pair(t: import('node:test').TestContext, opts: { flowControl?: boolean; autoReply?: boolean } = {}): Promise<Pair> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const serverSocket = new Promise<Socket>((r) => srv.once('connection', r));
  const clientSocket = connect((srv.address() as AddressInfo).port, '127.0.0.1');
  const ss = await serverSocket;
  const client = new SpdyConnection(clientSocket, { flowControl: opts.flowControl, streamHighWaterMark: 64 * 1024 });
  const server = new SpdyConnection(ss, { isServer: true, flowControl: opts.flowControl, streamHighWaterMark: 64 * 1024 });
  const accepted: SpdyStream[] = [];
  server.on('stream', (s: SpdyStream) => {
    accepted.push(s);
    s.on('error', () => {}); // resets are asserted where they matter
    if (opts.autoReply !== false) s.reply();
  });
  t.after(() => {
    client.destroy();
    server.destroy();
    srv.close();
  });
  return { client, server, clientSocket, serverSocket: ss, accepted };
}

/** Reads to the peer's FIN without destroying the stream (an async iterator would, resetting our half). */
function readAll(s: SpdyStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('error', reject);
    s.resume();
  });
}

test('streams carry headers both ways, data both ways, and half-close independently', async (t) => {
  const { client, accepted } = await pair(t);
  const s = await client.createStream({ streamType: 'stdin', port: '80' });
  assert.equal(s.id, 1);
  const peer = accepted[0]!;
  assert.equal(headerValue(peer.headers, 'streamtype'), 'stdin');
  s.end('to server'); // half-close: the server still writes
  assert.equal((await readAll(peer)).toString(), 'to server');
  peer.end('to client');
  assert.equal((await readAll(s)).toString(), 'to client');
  await pollUntil('both streams forgotten', () => client.streamCount === 0, { timeoutMs: 2000, intervalMs: 5 });
  const second = await client.createStream({ streamtype: 'x' });
  assert.equal(second.id, 3);
});

test('RST_STREAM ends that stream only, after the data sent before it; a refused stream rejects createStream', async (t) => {
  const { client, accepted } = await pair(t);
  const a = await client.createStream({ n: 'a' });
  const b = await client.createStream({ n: 'b' });
  a.pause(); // the data is still buffered on our side when the reset arrives
  accepted[0]!.write('before the reset');
  accepted[0]!.reset(RstStatus.INTERNAL_ERROR);
  await pollUntil('reset seen', () => a.resetStatus !== undefined, { timeoutMs: 2000, intervalMs: 5 });
  assert.equal((await readAll(a)).toString(), 'before the reset');
  assert.equal(a.resetStatus, RstStatus.INTERNAL_ERROR);
  b.end('still fine');
  assert.equal((await readAll(accepted[1]!)).toString(), 'still fine');

  const noReply = await pair(t, { autoReply: false });
  const pending = noReply.client.createStream({ n: 'c' });
  await pollUntil('server saw it', () => noReply.accepted.length === 1, { timeoutMs: 2000, intervalMs: 5 });
  noReply.accepted[0]!.reset(RstStatus.REFUSED_STREAM);
  await assert.rejects(pending, /REFUSED_STREAM/);
});

test('createStream honours its signal; GOAWAY refuses new streams; close ends the socket after the last stream', async (t) => {
  const { client, server, accepted } = await pair(t, { autoReply: false });
  const ac = new AbortController();
  const p = client.createStream({ n: 'x' }, { signal: ac.signal });
  ac.abort();
  await assert.rejects(p, { name: 'AbortError' });

  const open = client.createStream({ n: 'y' });
  await pollUntil('second stream seen', () => accepted.length === 2, { timeoutMs: 2000, intervalMs: 5 });
  accepted[1]!.reply();
  const s = await open;
  const goaway = new Promise((r) => client.once('goaway', r));
  server.close();
  assert.deepEqual(await goaway, { lastGoodStreamId: 3, status: 0 });
  await assert.rejects(client.createStream({ n: 'z' }), /closing/);
  const closed = new Promise((r) => client.once('close', r));
  s.end();
  accepted[1]!.end('bye');
  assert.equal((await readAll(s)).toString(), 'bye');
  await closed;
});

test('a PING from the peer is answered with the same id; our own parity is not echoed', async (t) => {
  const { serverSocket } = await pair(t);
  const reader = new FrameReader(new HeaderCodec());
  const seen: Frame[] = [];
  serverSocket.removeAllListeners('data'); // read the client's answers raw
  serverSocket.on('data', (c: Buffer) => seen.push(...reader.push(c)));
  serverSocket.write(encodeFrame({ type: 'ping', id: 1 })); // odd: the client's own parity, an answer to nothing
  serverSocket.write(encodeFrame({ type: 'ping', id: 2 }));
  await pollUntil('pong', () => seen.length > 0, { timeoutMs: 2000, intervalMs: 5 });
  assert.deepEqual(seen, [{ type: 'ping', id: 2 }]);
});

test('flowControl: the receiver grants window as its consumer reads, the sender waits for it', async (t) => {
  const { client, accepted, clientSocket } = await pair(t, { flowControl: true });
  // Every DATA byte the sender puts on the wire, counted as it is written.
  let onWire = 0;
  const tap = new FrameReader(new HeaderCodec());
  const write = clientSocket.write.bind(clientSocket) as (b: Buffer) => boolean;
  clientSocket.write = ((b: Buffer) => {
    for (const f of tap.push(Buffer.from(b))) if (f.type === 'data') onWire += f.data.length;
    return write(b);
  }) as typeof clientSocket.write;
  const s = await client.createStream({ n: 'w' });
  const peer = accepted[0]!;
  peer.pause();
  const total = 512 * 1024;
  let written = 0;
  let waiting = false;
  const writing = (async () => {
    while (written < total) {
      const ok = s.write(Buffer.alloc(16 * 1024, 1));
      written += 16 * 1024;
      if (!ok) {
        waiting = true;
        await new Promise((r) => s.once('drain', r));
        waiting = false;
      }
    }
    s.end();
  })();
  // Nobody reads: the receiver buffers up to its high-water mark (64 KiB), granting window only
  // while it fills, then grants none. So whatever the sender ever sends before the consumer reads
  // is bounded by the initial window plus that buffer (128 KiB), however long one waits: once the
  // receiver is full and the sender waits, the check below does not depend on timing.
  await pollUntil('the receiver full and the sender waiting', () => waiting && peer.readableLength >= 64 * 1024, { timeoutMs: 2000, intervalMs: 5 });
  assert.ok(onWire <= 128 * 1024, `the sender put ${onWire} bytes of DATA on the wire without window`);
  assert.ok(written < 200 * 1024, `sender went on to ${written} bytes without window`);
  peer.resume();
  assert.equal((await readAll(peer)).length, total);
  await writing;
});

test('without flowControl no WINDOW_UPDATE is sent; a consumer that does not read pauses the socket (TCP pushes back)', async (t) => {
  const { client, accepted, serverSocket } = await pair(t);
  // Everything the receiving side writes, decoded.
  const sent: Frame[] = [];
  const tap = new FrameReader(new HeaderCodec());
  const write = serverSocket.write.bind(serverSocket) as (b: Buffer) => boolean;
  serverSocket.write = ((b: Buffer) => {
    sent.push(...tap.push(Buffer.from(b)));
    return write(b);
  }) as typeof serverSocket.write;
  const s = await client.createStream({ n: 'bp' });
  const peer = accepted[0]!;
  peer.pause();
  let written = 0;
  const flood = 64 * 1024 * 1024;
  let stalled = false;
  while (written < flood) {
    const ok = s.write(Buffer.alloc(64 * 1024));
    written += 64 * 1024;
    if (!ok) {
      const drained = await Promise.race([new Promise((r) => s.once('drain', () => r(true))), new Promise((r) => setTimeout(() => r(false), 300))]);
      if (!drained) {
        stalled = true;
        break;
      }
    }
  }
  assert.ok(stalled, 'the writer was never stopped');
  assert.ok(serverSocket.isPaused(), 'the receiving socket is paused');
  assert.ok(peer.readableLength <= 64 * 1024 + 32 * 1024, `receiver buffered ${peer.readableLength} bytes`);
  peer.resume();
  s.end();
  assert.equal((await readAll(peer)).length, written);
  assert.deepEqual([...new Set(sent.map((f) => f.type))], ['syn_reply'], 'only the reply: no WINDOW_UPDATE for a peer that ignores them');
});

test('the peer closing TCP ends open streams without losing what it sent', async (t) => {
  const { client, accepted, serverSocket } = await pair(t);
  const s = await client.createStream({ n: 'eof' });
  accepted[0]!.write('last words');
  await pollUntil('data arrived', () => s.readableLength > 0, { timeoutMs: 2000, intervalMs: 5 });
  serverSocket.end();
  assert.equal((await readAll(s)).toString(), 'last words');
  await pollUntil('client closed', () => client.isClosed, { timeoutMs: 2000, intervalMs: 5 });
});
