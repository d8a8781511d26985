// readBody on a real node:http server (port 0), over raw sockets: what a body read does to the
// request and its connection in each way it can end. The read is on every create's path, so
// these pin its stream handling: a finished request is destroyed and its connection kept; a body
// past the limit is a 413 whose rest is discarded, the connection kept (with a mid-body excess
// the connection used to stall after the 413: the second test of that case failed before); a
// client gone fails the read.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { pollUntil } from '@nodelet/base';
import { rawExchange, stalledUpload, type StalledUpload } from '@nodelet/api/testing';
import { readBody } from './media.js';
import { StatusError } from './status.js';

const LIMIT = 1024;
const servers: http.Server[] = [];
const uploads: StalledUpload[] = [];
afterEach(async () => {
  for (const u of uploads.splice(0)) u.socket.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

interface Read {
  body?: Buffer;
  error?: unknown;
  /** The request's state right after the read settled. */
  destroyed: boolean;
  complete: boolean;
}

/** A server whose handler reads the body `times` times (limit LIMIT) and answers with its length. */
async function serve(times = 1): Promise<{ port: number; reads: Read[]; started: () => number }> {
  const reads: Read[] = [];
  let started = 0;
  const server = http.createServer((req, res) => {
    started++;
    void (async () => {
      let last: Read | undefined;
      for (let i = 0; i < times; i++) {
        try {
          const body = await readBody(req, LIMIT);
          reads.push((last = { body, destroyed: req.destroyed, complete: req.complete }));
        } catch (error) {
          reads.push((last = { error, destroyed: req.destroyed, complete: req.complete }));
        }
      }
      if (last?.error instanceof StatusError) res.writeHead(last.error.code).end(last.error.message);
      else if (last?.error) res.destroy();
      else res.end(`${last!.body!.length}:${last!.body!.toString('latin1').slice(0, 8)}`);
    })();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, reads, started: () => started };
}

/**
 * Sends `parts` on one connection (`gapMs` apart) and returns everything the server sent once it
 * closed the connection (the last request says `Connection: close`), or after `waitMs`.
 */
async function exchange(port: number, parts: string[], gapMs = 20, waitMs = 3000): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  for (const p of parts) {
    socket.write(p);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  socket.destroy();
  return text;
}

/** The bodies of the replies in `text` (each small, written with Content-Length or one chunk). */
function replyBodies(text: string): string[] {
  return text.split(/HTTP\/1\.1 /).slice(1).map((r) => {
    const body = r.slice(r.indexOf('\r\n\r\n') + 4);
    return /^[0-9a-f]+\r\n/.test(body) ? body.slice(body.indexOf('\r\n') + 2, body.indexOf('\r\n', body.indexOf('\r\n') + 2)) : body;
  });
}

const chunk = (s: string): string => `${s.length.toString(16)}\r\n${s}\r\n`;
const chunkedHead = 'POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';

describe('readBody', () => {
  it('reads a chunked body whole and in order; the finished request is destroyed and its keep-alive connection serves the next request', async () => {
    const h = await serve();
    const parts = [chunkedHead, chunk('abcd'), chunk('efgh'), chunk('x'.repeat(500)), '0\r\n\r\n', `POST /y HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz`];
    const text = await exchange(h.port, parts);
    assert.deepEqual(replyBodies(text), ['508:abcdefgh', '3:xyz']);
    assert.equal(h.reads.length, 2);
    assert.equal(h.reads[0]!.body!.toString(), `abcdefgh${'x'.repeat(500)}`);
    assert.deepEqual(h.reads.map((r) => [r.destroyed, r.complete]), [[true, true], [true, true]]);
  });

  it('a body exactly at the limit is read', async () => {
    const h = await serve();
    const reply = await rawExchange({ host: '127.0.0.1', port: h.port }, [chunkedHead, chunk('a'.repeat(LIMIT - 1)), chunk('b'), '0\r\n\r\n']);
    assert.equal(reply.body, `${LIMIT}:aaaaaaaa`);
  });

  it('a body past the limit mid-stream (no Content-Length) fails with 413 at once, before the upload ends', async () => {
    const h = await serve();
    const upload = stalledUpload({ host: '127.0.0.1', port: h.port }, chunkedHead, chunk('a'.repeat(LIMIT)) + chunk('b'));
    uploads.push(upload);
    await pollUntil('the read to fail', async () => h.reads.length === 1, { timeoutMs: 2000, intervalMs: 10 });
    const { error, complete } = h.reads[0]!;
    assert.ok(error instanceof StatusError && error.code === 413 && error.reason === 'RequestEntityTooLarge', `failed with ${String(error)}`);
    assert.equal(complete, false);
  });

  it('after a mid-body 413 the rest of the upload is discarded and the connection serves the next request', async () => {
    const h = await serve();
    const parts = [chunkedHead + chunk('a'.repeat(LIMIT)) + chunk('b'), chunk('c'.repeat(100_000)) + '0\r\n\r\n', 'POST /y HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'];
    const text = await exchange(h.port, parts, 50);
    assert.deepEqual(replyBodies(text), [`Request entity too large: limit is ${LIMIT}`, '2:ok']);
    assert.match(text, /^HTTP\/1\.1 413 /);
  });

  it('a declared Content-Length past the limit is 413 without reading; the upload is discarded and the connection kept', async () => {
    const h = await serve();
    const big = 'c'.repeat(LIMIT + 1);
    const parts = [`POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}`, 'POST /y HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'];
    const text = await exchange(h.port, parts, 50);
    assert.deepEqual(replyBodies(text), [`Request entity too large: limit is ${LIMIT}`, '2:ok']);
    const error = h.reads[0]!.error;
    assert.ok(error instanceof StatusError && error.code === 413, `failed with ${String(error)}`);
  });

  it('a client that goes away mid-body fails the read with the request’s aborted error', async () => {
    const h = await serve();
    const upload = stalledUpload({ host: '127.0.0.1', port: h.port }, 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n', 'half');
    uploads.push(upload);
    await pollUntil('the handler to read', async () => h.started() === 1, { timeoutMs: 2000, intervalMs: 10 });
    upload.socket.destroy();
    await pollUntil('the read to fail', async () => h.reads.length === 1, { timeoutMs: 2000, intervalMs: 10 });
    const error = h.reads[0]!.error as NodeJS.ErrnoException;
    assert.deepEqual([error?.message, error?.code, h.reads[0]!.destroyed], ['aborted', 'ECONNRESET', true]);
  });

  it('a second read of a request already read returns an empty body', async () => {
    const h = await serve(2);
    const reply = await rawExchange({ host: '127.0.0.1', port: h.port }, ['POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello']);
    assert.equal(reply.body, '0:');
    assert.equal(h.reads[0]!.body!.toString(), 'hello');
  });
});
