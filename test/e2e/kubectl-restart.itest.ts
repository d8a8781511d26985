// `kill -9` of a real `nodelet server` process while writes are in flight: after a restart on
// the same data dir every acknowledged write is there and resourceVersions keep increasing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpsRequest, KUBECTL } from './kubectl-harness.js';
import { adminBearerToken } from '../../api/test/integration/processes.js';
import { pollUntil } from '@nodelet/base';
import { cleanups, startServerProcess, type AfterHookHost, type ServerProcess } from '@nodelet/base/testing';

interface Running {
  proc: ServerProcess;
  url: string;
  token: string;
  ca: string;
}

async function startServer(t: AfterHookHost, dataDir: string): Promise<Running> {
  const proc = await startServerProcess({ dataDir, args: ['--disable-controllers'], t });
  return { proc, url: proc.url, token: await adminBearerToken(join(dataDir, 'admin.kubeconfig')), ca: await readFile(join(dataDir, 'pki', 'ca.crt'), 'utf8') };
}

const cm = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } });

describe('server crash recovery', () => {
  it('acknowledged writes survive kill -9 and RVs keep increasing', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-crash-'));
    cleanups(t)(() => rm(dir, { recursive: true, force: true }));
    let srv = await startServer(t, dir);
    const acked = new Map<string, number>();
    let stop = false;
    // Four writers keep creating until the kill; only 201 replies count as acknowledged.
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        try {
          const r = await httpsRequest(srv.url, srv.ca, srv.token, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm(name), contentType: 'application/json' });
          if (r.status === 201) acked.set(name, Number(r.json().metadata.resourceVersion));
        } catch {
          return; // connection died with the server
        }
      }
    });
    await pollUntil('40 acknowledged writes', () => acked.size >= 40, { timeoutMs: 20_000, intervalMs: 25 });
    const killed = srv.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await killed;
    const maxRv = Math.max(...acked.values());

    srv = await startServer(t, dir);
    const list = await httpsRequest(srv.url, srv.ca, srv.token, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(list.status, 200);
    const stored = new Map<string, number>(list.json().items.map((i: { metadata: { name: string; resourceVersion: string } }) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
    for (const [name, rv] of acked) assert.equal(stored.get(name), rv, `acknowledged ${name}@${rv} is missing after the crash`);
    assert.ok(Number(list.json().metadata.resourceVersion) >= maxRv);
    const next = await httpsRequest(srv.url, srv.ca, srv.token, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('after-crash'), contentType: 'application/json' });
    assert.equal(next.status, 201, next.body);
    assert.ok(Number(next.json().metadata.resourceVersion) > maxRv, 'resourceVersion went backwards after the restart');
    // Graceful stop on SIGTERM ends watches (kubectl get -w exits 0) and exits 0.
    let watcher: ReturnType<typeof execFile> | undefined;
    let watcherExit: Promise<number | null> | undefined;
    let watcherErr = '';
    if (existsSync(KUBECTL)) {
      watcher = execFile(KUBECTL, ['--kubeconfig', join(dir, 'admin.kubeconfig'), '--cache-dir', join(dir, 'kcache'), 'get', 'configmaps', '-w', '-v=6']);
      watcher.stderr!.on('data', (d: Buffer) => (watcherErr += d.toString()));
      watcherExit = new Promise((r) => watcher!.once('exit', (c) => r(c)));
      await pollUntil('kubectl get -w to start watching', () => /watch=true[^\n]* 200 OK/.test(watcherErr), { timeoutMs: 15_000, intervalMs: 25 });
    }
    await srv.proc.kill('SIGTERM');
    assert.equal(srv.proc.exited()?.code, 0, srv.proc.tail());
    if (watcherExit) assert.equal(await watcherExit, 0, watcherErr.slice(-500));
  });
});
