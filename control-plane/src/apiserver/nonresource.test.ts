// Non-resource paths are authorized before anything is written: a caller refused a path gets the
// 403, never the document followed by an error the client cannot see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveNonResource } from './nonresource.js';
import { RESOURCE_DEFS } from './resources.js';
import { sendError } from './respond.js';
import { StatusError } from './status.js';

/** A loopback server answering every GET with serveNonResource, refusing all when `allowed` is false. */
async function withServer(allowed: boolean, fn: (get: (path: string) => Promise<{ status: number; body: string }>) => Promise<void>): Promise<void> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    try {
      const served = serveNonResource(req, res, url, '127.0.0.1', RESOURCE_DEFS, () => {
        if (!allowed) throw new StatusError(403, 'Forbidden', `forbidden: ${url.pathname}`, {});
      });
      if (!served) sendError(res, new StatusError(404, 'NotFound', 'not served', {}));
    } catch (err) {
      sendError(res, err);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const get = (path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        })
        .on('error', reject);
    });
  try {
    await fn(get);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const PATHS = ['/version', '/api', '/apis', '/api/v1', '/apis/apps', '/apis/apps/v1', '/apis/nope/v1', '/openapi/v3', '/openapi/v3/apis/apps/v1', '/openapi/v2'];

test('a refused caller gets 403 and no document from every non-resource path', async () => {
  await withServer(false, async (get) => {
    for (const p of PATHS) {
      const r = await get(p);
      assert.equal(r.status, 403, p);
      assert.equal(JSON.parse(r.body).reason, 'Forbidden', p);
    }
    assert.equal((await get('/elsewhere')).status, 404);
  });
});

test('an allowed caller gets the documents (404 for a group not served)', async () => {
  await withServer(true, async (get) => {
    for (const p of PATHS) assert.equal((await get(p)).status, p === '/apis/nope/v1' ? 404 : 200, p);
    assert.equal((await get('/elsewhere')).status, 404);
  });
});
