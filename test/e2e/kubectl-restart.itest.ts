// `kill -9` of a real `nodelet server` process while writes are in flight: after a restart on
// the same data dir every acknowledged write is there and resourceVersions keep increasing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpsRequest, KUBECTL } from './kubectl-harness.js';
import { adminBearerToken } from '../../api/test/integration/processes.js';
import { pollUntil } from '@nodelet/base';

const ROOT = new URL('../..', import.meta.url).pathname;

interface Running {
  child: ChildProcess;
  url: string;
  token: string;
  ca: string;
}

async function startServer(dataDir: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', join(ROOT, 'bin/nodelet'), 'server', '--data-dir', dataDir, '--bind-address', '127.0.0.1', '--port', '0', '--registry-address', '', '--disable-controllers'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await pollUntil(`server start (output: ${out.slice(-500)})`, () => /"url":"(https:\/\/[^"]+)".*"msg":"Server ready"/.exec(out)?.[1], { timeoutMs: 30_000, intervalMs: 25 });
  return { child, url, token: await adminBearerToken(join(dataDir, 'admin.kubeconfig')), ca: await readFile(join(dataDir, 'pki', 'ca.crt'), 'utf8') };
}

const cm = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } });

describe('server crash recovery', () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('acknowledged writes survive kill -9 and RVs keep increasing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-crash-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    let srv = await startServer(dir);
    cleanup.push(async () => void srv.child.kill('SIGKILL'));
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
    srv.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await new Promise((r) => srv.child.once('exit', r));
    const maxRv = Math.max(...acked.values());

    srv = await startServer(dir);
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
    srv.child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => srv.child.once('exit', (c) => r(c)));
    assert.equal(code, 0);
    if (watcherExit) assert.equal(await watcherExit, 0, watcherErr.slice(-500));
  });
});
