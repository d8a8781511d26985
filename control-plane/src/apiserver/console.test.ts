// The web console's static files at /ui/ (console.ts): served before authentication with strong
// caching and a strict CSP, and in a way that opens no API path to an anonymous caller.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

/** One raw request: the path goes out exactly as written (fetch would normalise `..`). */
function raw(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web console at /ui/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-console-test-'));
  const js = 'console.log("page")\n'.repeat(50);
  let srv: TestApiServer;
  let unbuilt: TestApiServer;
  let off: TestApiServer;
  before(async () => {
    mkdirSync(join(dir, 'built', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'built', 'index.html'), '<!doctype html><script type="module" src="assets/app-ABC.js"></script>');
    writeFileSync(join(dir, 'built', 'assets', 'app-ABC.js'), js);
    srv = await startTestApiServer({ console: { dir: join(dir, 'built') } });
    unbuilt = await startTestApiServer({ console: { dir: join(dir, 'missing') } });
    off = await startTestApiServer({});
  });
  after(async () => {
    await Promise.all([srv?.close(), unbuilt?.close(), off?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html without credentials, revalidated, under a strict CSP', async () => {
    const r = await raw(srv.url, 'GET', '/ui/');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    const csp = String(r.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline script');
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(r.body.toString(), /app-ABC\.js/);
    const redirect = await raw(srv.url, 'GET', '/ui');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.location, '/ui/');
  });

  it('serves hashed assets as immutable, gzipped when asked, HEAD without a body', async () => {
    const r = await raw(srv.url, 'GET', '/ui/assets/app-ABC.js', { 'Accept-Encoding': 'gzip, br' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.match(String(r.headers['content-type']), /^text\/javascript/);
    assert.equal(gunzipSync(r.body).toString(), js);
    const plain = await raw(srv.url, 'GET', '/ui/assets/app-ABC.js');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body.toString(), js);
    const head = await raw(srv.url, 'HEAD', '/ui/assets/app-ABC.js');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });

  it('opens no API path to an anonymous caller', async () => {
    for (const path of ['/api/v1/pods', '/ui/../api/v1/pods', '/ui/%2e%2e/api/v1/pods', '/ui%2f..%2fapi/v1/pods', '/apis/apps/v1/deployments', '/uiapi/v1/pods']) {
      const r = await raw(srv.url, 'GET', path);
      assert.notEqual(r.status, 200, `${path} answered 200 without a token`);
      assert.ok(r.status === 401 || r.status === 404, `${path}: ${r.status}`);
      assert.doesNotMatch(r.body.toString(), /"kind":"PodList"/);
    }
    assert.equal((await raw(srv.url, 'GET', '/api/v1/pods')).status, 401);
    const withToken = await srv.call('GET', '/api/v1/pods');
    assert.equal(withToken.status, 200, 'the API itself is unchanged for an authenticated caller');
  });

  it('answers only GET and HEAD, and 404 for files it does not hold', async () => {
    const post = await raw(srv.url, 'POST', '/ui/');
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await raw(srv.url, 'GET', '/ui/assets/nope.js')).status, 404);
    assert.equal((await raw(srv.url, 'GET', '/ui/../../etc/passwd')).status, 401, 'normalised to /etc/passwd: an API path, unauthenticated');
  });

  it('says so when enabled but not built, and is absent when turned off', async () => {
    const r = await raw(unbuilt.url, 'GET', '/ui/');
    assert.equal(r.status, 404);
    assert.match(r.body.toString(), /not built: run `make console`/);
    assert.equal((await raw(off.url, 'GET', '/ui/')).status, 401, 'without the console /ui/ is an ordinary path');
  });
});
