// The spliced WebSocket writer: after a 101 head, every write to the client socket is one
// frame's bytes, however the agent's bytes were chunked; other responses pass through as they came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { webSocketFrameWriter } from './ws-frame-writer.js';

function recorder(): { out: Writable; writes: Buffer[] } {
  const writes: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      writes.push(chunk);
      setImmediate(cb);
    },
  });
  return { out, writes };
}

const frame = (payload: Buffer): Buffer => {
  const len = payload.length;
  const head = len < 126 ? Buffer.of(0x82, len) : len < 65536 ? Buffer.of(0x82, 126, len >> 8, len & 0xff) : Buffer.concat([Buffer.of(0x82, 127), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(len)); return b; })()]);
  return Buffer.concat([head, payload]);
};

async function feed(chunks: Buffer[]): Promise<Buffer[]> {
  const { out, writes } = recorder();
  const src = new PassThrough();
  const done = pipeline(src, webSocketFrameWriter(out as unknown as import('node:stream').Duplex));
  for (const c of chunks) src.write(c);
  src.end();
  await done;
  return writes;
}

test('after a 101, frames that arrived together are written one by one, split wherever the chunks fell', async () => {
  const head = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n');
  const frames = [frame(Buffer.from('\x00\x90\x1f')), frame(Buffer.from('\x01\x90\x1f')), frame(Buffer.alloc(300, 7)), frame(Buffer.alloc(70_000, 8)), Buffer.of(0x88, 2, 3, 0xe8)];
  const all = Buffer.concat([head, ...frames]);
  for (const size of [all.length, 1, 5, 4096]) {
    const chunks: Buffer[] = [];
    for (let i = 0; i < all.length; i += size) chunks.push(all.subarray(i, i + size));
    const writes = await feed(chunks);
    assert.deepEqual(Buffer.concat(writes), all, `chunk size ${size}: bytes unchanged`);
    // Each write past the head lies within one frame.
    const bounds: number[] = [];
    let at = head.length;
    for (const f of frames) bounds.push((at += f.length));
    let pos = 0;
    for (const w of writes) {
      const start = pos;
      pos += w.length;
      if (pos <= head.length) continue;
      const next = bounds.find((b) => b > Math.max(start, head.length));
      assert.ok(next !== undefined && pos <= next, `chunk size ${size}: a write spans a frame boundary (${start}..${pos})`);
    }
    if (size === all.length) assert.equal(writes.length, 1 + frames.length);
  }
});

test('a response other than 101 passes through as it came', async () => {
  const body = Buffer.from('HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n\r\nno\n');
  assert.deepEqual(Buffer.concat(await feed([body])), body);
});
