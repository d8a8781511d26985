// `nodelet server --ui`: on by default (/ui/ answered before authentication, under the console's
// CSP), off with --ui=false (/ui/ is then an ordinary path: 401 without credentials), and a value
// other than true/false is a usage error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadKubeconfig } from '@nodelet/api';
import { startServerProcess } from '@nodelet/base/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** GET `path` without credentials, trusting the server's CA from its admin kubeconfig. */
async function anonymousGet(url: string, kubeconfig: string, path: string): Promise<{ status: number; csp: string }> {
  const kc = await loadKubeconfig(kubeconfig);
  return new Promise((resolve, reject) => {
    https
      .get(`${url}${path}`, { ca: kc.ca, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, csp: String(res.headers['content-security-policy'] ?? '') }));
      })
      .on('error', reject);
  });
}

test('nodelet server serves /ui/ unless --ui=false; --ui takes only true or false', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-console-flag-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const bad = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--conditions=source', '--import', 'tsx', join(ROOT, 'bin', 'nodelet'), 'server', '--data-dir', join(dir, 'bad'), '--ui=maybe'], { cwd: ROOT, timeout: 60_000 }, (err, _out, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }));
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--ui takes true or false, got "maybe"/);

  for (const [args, served] of [[[], true], [['--ui=false'], false]] as const) {
    const server = await startServerProcess({ dataDir: join(dir, served ? 'on' : 'off'), args: ['--disable-controllers', ...args] });
    try {
      const r = await anonymousGet(server.url, server.kubeconfig, '/ui/');
      if (served) {
        // 200 where `make console` has built the page, 404 "not built" where not: never a 401.
        assert.ok(r.status === 200 || r.status === 404, `/ui/ answered ${r.status}`);
        assert.match(r.csp, /default-src 'self'/);
      } else {
        assert.equal(r.status, 401, '--ui=false: /ui/ is an ordinary, authenticated path');
        assert.equal(r.csp, '');
      }
      assert.equal((await anonymousGet(server.url, server.kubeconfig, '/api/v1/pods')).status, 401);
    } finally {
      await server.stop();
    }
  }
});
