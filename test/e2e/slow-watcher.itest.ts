// A watcher that never reads, against a real `nodelet server` process: the server cuts it off
// once its unsent events pass the cap (8 MiB by default) and its memory stays bounded while
// ~190 MiB of events keep coming, instead of buffering every event for the stalled client (the
// previous code ran out of heap and died).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { adminBearerToken } from '../../api/test/integration/processes.js';
import { freePort, startServerProcess, type ServerProcess } from '@nodelet/base/testing';

const NS = '/api/v1/namespaces/slow';
const VALUE_BYTES = 32 * 1024;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

describe('a watcher that does not read', () => {
  let dir: string;
  let srv: ServerProcess;
  let ca: string;
  let token: string;
  let agent: https.Agent;
  const call = (method: string, path: string, body: string, contentType = 'application/json'): Promise<number> =>
    new Promise((resolve, reject) => {
      const r = https.request(new URL(path, srv.url), { method, agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      r.on('error', reject);
      r.end(body);
    });
  /** `n` merge patches spread over 8 configmaps, 8 at a time: each is a ~10 KiB watch event. */
  async function churn(n: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        while (next < n) {
          const i = next++;
          const code = await call('PATCH', `${NS}/configmaps/c${w}`, JSON.stringify({ data: { v: `${i}`.padEnd(VALUE_BYTES, 'x') } }), 'application/merge-patch+json');
          assert.equal(code, 200);
        }
      }),
    );
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nodelet-slow-watcher-'));
    srv = await startServerProcess({ dataDir: dir, port: await freePort(), env: { NODE_OPTIONS: '--max-old-space-size=160' }, args: ['--disable-controllers'] });
    token = await adminBearerToken(srv.kubeconfig);
    ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
    agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca });
  });
  after(async () => {
    agent?.destroy();
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is cut off once its unsent bytes pass the cap, and the server memory stays bounded', { timeout: 300_000 }, async () => {
    assert.equal(await call('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'slow' } })), 201);
    for (let w = 0; w < 8; w++) assert.equal(await call('POST', `${NS}/configmaps`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${w}` } })), 201);
    // Warm up: fill the watch cache (1000 events) so that its growth is not counted below.
    await churn(1200);
    const baseline = await rssMiB(srv.pid);

    const url = new URL(srv.url);
    const watcher = tls.connect({ host: url.hostname, port: Number(url.port), ca });
    watcher.on('error', () => undefined);
    await new Promise((r) => watcher.once('secureConnect', r));
    watcher.write(`GET ${NS}/configmaps?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    // No 'data' listener: the client stops reading once its buffers are full.
    const growth: number[] = [];
    for (let k = 0; k < 12; k++) {
      await churn(500);
      growth.push((await rssMiB(srv.pid)) - baseline);
    }
    watcher.destroy();
    const sentMiB = Math.round((12 * 500 * VALUE_BYTES) / 2 ** 20);

    assert.equal(srv.exited(), undefined, `the server exited:\n${srv.output().slice(-2000)}`);
    const cut = /"buffered":(\d+)[^\n]*"msg":"Closing unresponsive watcher"/.exec(srv.output());
    assert.ok(cut, 'the server never cut the watcher off');
    assert.ok(Number(cut[1]) < 8 * 2 ** 20 + 2 * VALUE_BYTES + 4096, `the watcher was cut with ${cut[1]} bytes buffered`);
    // The heap is capped (160 MiB old space) so that garbage cannot pass for a leak: what the
    // server retained for the watcher is what would make RSS climb with the events.
    assert.ok(Math.max(...growth) < 120, `server RSS grew by ${growth.map((g) => g.toFixed(0)).join(', ')} MiB while ${sentMiB} MiB of events went to a stalled watcher`);
  });
});
