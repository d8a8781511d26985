// The request chain's filters on a real node:http server (port 0): each releases what it took
// when a filter after it throws or the request times out, and a timed-out handler sees its
// signal aborted. The whole server's chain is tested in ../slow-body.test.ts and
// ../server-limits.test.ts.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { pollUntil, type Logger } from '@nodelet/base';
import { rawExchange, stalledUpload, type RawReply, type StalledUpload } from '@nodelet/api/testing';
import type { UserInfo } from '../auth/types.js';
import { InflightLimiter } from '../limits.js';
import { readBody } from '../media.js';
import { StatusError, forbidden } from '../status.js';
import { ApiRequest, runChain, type Filter, type Handler } from './chain.js';
import { maxInflightFilter } from './max-inflight.js';
import { recoveryFilter } from './recovery.js';
import { requestInfoFilter } from './request-info.js';
import { timeoutFilter } from './timeout.js';

const USER: UserInfo = { name: 'u', groups: ['system:authenticated'] };
/** Stands in for authentication: every request is USER. */
const asUser: Filter = async (r, next) => {
  r.authenticated = r.user = USER;
  await next();
};

interface Harness {
  port: number;
  warnings: string[];
  /** Each request's chain run: it must always resolve. */
  runs: Array<Promise<void>>;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(filters: (log: Logger) => Filter[], handler: Handler): Promise<Harness> {
  const warnings: string[] = [];
  const log: Logger = { error: () => undefined, warn: (_o, msg) => void warnings.push(msg), info: () => undefined, debug: () => undefined, child: () => log };
  const runs: Array<Promise<void>> = [];
  const chain = filters(log);
  const server = http.createServer((req, res) => void runs.push(runChain(chain, handler, new ApiRequest(req, res))));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, warnings, runs };
}

const post = (path: string, body = '{}'): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;

function statusOf(r: RawReply): { code: number; reason: string } {
  const body = JSON.parse(r.body) as { code: number; reason: string; kind: string };
  assert.equal(body.kind, 'Status', r.body);
  return { code: body.code, reason: body.reason };
}

/** A request that declares 1000 bytes of body and sends 9. */
const stalled = (port: number): StalledUpload =>
  stalledUpload({ host: '127.0.0.1', port }, 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n', '{"kind":');

describe('request filter chain', () => {
  it('runs filters in order; a filter calling next twice runs the rest once', async () => {
    const seen: string[] = [];
    const tag = (name: string): Filter => async (_r, next) => {
      seen.push(name);
      await next();
      await next();
    };
    const h = await serve(() => [tag('a'), tag('b')], async (r) => {
      seen.push('handler');
      r.res.end('ok');
    });
    assert.equal((await rawExchange({ host: '127.0.0.1', port: h.port }, [post('/x')])).status, 200);
    await Promise.all(h.runs);
    assert.deepEqual(seen, ['a', 'b', 'handler']);
  });

  it('recovery turns whatever escapes into a Status and never rejects', async () => {
    let thrown: unknown = new Error('boom');
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter()], async () => {
      throw thrown;
    });
    const target = { host: '127.0.0.1', port: h.port };
    assert.deepEqual(statusOf(await rawExchange(target, [post('/x')])), { code: 500, reason: 'InternalError' });
    thrown = forbidden('no');
    assert.deepEqual(statusOf(await rawExchange(target, [post('/x')])), { code: 403, reason: 'Forbidden' });
    assert.deepEqual(statusOf(await rawExchange(target, [post('http://[')])), { code: 400, reason: 'BadRequest' });
    await Promise.all(h.runs);
  });

  it('max in flight releases its slot when a later filter throws', async () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), asUser, maxInflightFilter(limiter)], async () => {
      assert.equal(limiter.inUse().mutating, 1, 'the handler runs holding a slot');
      throw new StatusError(422, 'Invalid', 'no');
    });
    const target = { host: '127.0.0.1', port: h.port };
    for (let i = 0; i < 3; i++) assert.deepEqual(statusOf(await rawExchange(target, [post('/x')])), { code: 422, reason: 'Invalid' });
    await Promise.all(h.runs);
    assert.deepEqual(limiter.inUse(), { readOnly: 0, mutating: 0 });
  });

  it('a timed-out handler sees its signal aborted with the 504, and its slot is freed before it returns', async () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    let finish!: () => void;
    const stuck = new Promise<void>((r) => (finish = r));
    let reason: unknown;
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), timeoutFilter({ timeoutMs: 200, logger: log }), asUser, maxInflightFilter(limiter)], async (r) => {
      r.signal.addEventListener('abort', () => (reason = r.signal.reason));
      await stuck; // ignores its signal, as a handler stuck in a call without one would
    });
    const reply = await rawExchange({ host: '127.0.0.1', port: h.port }, [post('/x')]);
    assert.deepEqual(statusOf(reply), { code: 504, reason: 'Timeout' });
    assert.equal(reply.headers.connection, 'close');
    await pollUntil('the signal to abort', async () => reason !== undefined, { timeoutMs: 2000, intervalMs: 10 });
    assert.ok(reason instanceof StatusError && reason.code === 504, `aborted with ${String(reason)}`);
    assert.deepEqual(limiter.inUse(), { readOnly: 0, mutating: 0 }, 'the slot is free while the handler still runs');
    assert.deepEqual(h.warnings, ['Request timed out']);
    await Promise.all(h.runs); // the chain is done although the handler is not
    finish();
  });

  it('a stalled body read is aborted by the timeout and its connection closed', async () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    let readFailure: unknown;
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), timeoutFilter({ timeoutMs: 200, logger: log }), asUser, maxInflightFilter(limiter)], async (r) => {
      try {
        await readBody(r.req, 3 * 1024 * 1024, r.signal);
      } catch (err) {
        readFailure = err;
        throw err;
      }
    });
    const upload = stalled(h.port);
    const text = await upload.closed; // the test never closes it: the server did
    assert.match(text, /^HTTP\/1\.1 504 /);
    await pollUntil('the body read to fail', async () => readFailure !== undefined, { timeoutMs: 2000, intervalMs: 10 });
    assert.ok(readFailure instanceof StatusError && readFailure.code === 504, `the read failed with ${String(readFailure)}`);
    assert.deepEqual(limiter.inUse(), { readOnly: 0, mutating: 0 });
  });

  it('a client that goes away aborts the signal and frees the slot', async () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    let reading = false;
    let readFailure: unknown;
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), timeoutFilter({ timeoutMs: 0, logger: log }), asUser, maxInflightFilter(limiter)], async (r) => {
      reading = true;
      await readBody(r.req, 1024, r.signal).catch((err: unknown) => {
        readFailure = err;
      });
    });
    const upload = stalled(h.port);
    await pollUntil('the handler to read', async () => reading, { timeoutMs: 2000, intervalMs: 10 });
    assert.equal(limiter.inUse().mutating, 1);
    upload.socket.destroy();
    await once(upload.socket, 'close');
    await pollUntil('the slot to be freed', async () => limiter.inUse().mutating === 0, { timeoutMs: 2000, intervalMs: 10 });
    await Promise.all(h.runs);
    assert.ok(readFailure, 'the body read failed');
    assert.deepEqual(h.warnings, [], 'no timeout was involved');
  });

  it('a request that ends before its timeout leaves no timer: its signal aborts only as the request ends', async (t) => {
    // Every timer started and cleared while the request runs, recorded (the calls still go through).
    const started = t.mock.method(globalThis, 'setTimeout');
    const cleared = t.mock.method(globalThis, 'clearTimeout');
    let signal!: AbortSignal;
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), timeoutFilter({ timeoutMs: 100, logger: log })], async (r) => {
      signal = r.signal;
      throw new StatusError(409, 'Conflict', 'no');
    });
    assert.deepEqual(statusOf(await rawExchange({ host: '127.0.0.1', port: h.port }, [post('/x')])), { code: 409, reason: 'Conflict' });
    await Promise.all(h.runs);
    await pollUntil('the request signal to abort as the reply closes', async () => signal.aborted, { timeoutMs: 2000, intervalMs: 10 });
    assert.equal((signal.reason as Error).name, 'AbortError');
    // The filter's timer (the one of its 100 ms) was cleared when the handler answered, so it can
    // never fire to log and answer a 504.
    const timers = started.mock.calls.filter((c) => c.arguments[1] === 100).map((c) => c.result);
    assert.equal(timers.length, 1);
    assert.ok(cleared.mock.calls.some((c) => c.arguments[0] === timers[0]), 'the timeout timer was cleared');
    assert.deepEqual(h.warnings, []);
  });

  it('long-running requests have no timeout and take no slot', async () => {
    const limiter = new InflightLimiter({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1 });
    const h = await serve((log) => [recoveryFilter(log), requestInfoFilter(), timeoutFilter({ timeoutMs: 50, logger: log }), asUser, maxInflightFilter(limiter)], async (r) => {
      assert.equal(r.longRunning, true);
      assert.equal(limiter.inUse().readOnly, 0);
      await new Promise((resolve) => setTimeout(resolve, 200)); // outlives the 50 ms timeout
      r.res.end('ok');
    });
    const reply = await rawExchange({ host: '127.0.0.1', port: h.port }, ['GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    assert.equal(reply.status, 200, reply.body);
    assert.deepEqual(h.warnings, []);
  });
});
