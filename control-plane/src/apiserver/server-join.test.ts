// GET /nodelet/v1/server-join-bundle: only an unexpired server join token opens it, and that
// token opens nothing else (cli/test/integration/server-join.itest.ts runs the whole join).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newServerJoinToken, SERVER_JOIN_PATH, type ServerJoinBundle } from '@nodelet/api';
import { startTestApiServer, TEST_ADMIN_TOKEN as ADMIN, type TestReply } from './testing/test-server.js';

const BUNDLE: ServerJoinBundle = { caCert: 'ca', caKey: 'key', serviceAccountKey: 'sa', datastoreEndpoint: 'etcd://10.0.0.1:2379' };

async function withServer(bundle: boolean, fn: (base: string, call: (method: string, path: string, token: string, body?: unknown) => Promise<TestReply>) => Promise<void>): Promise<void> {
  const srv = await startTestApiServer(bundle ? { serverJoinBundle: async () => BUNDLE } : {});
  try {
    await fn(srv.url, (method, path, token, body) => srv.call(method, path, body, { token }));
  } finally {
    await srv.close();
  }
}

describe('server join bundle', () => {
  it('is handed to a valid server join token only', async () => {
    await withServer(true, async (_base, call) => {
      const good = newServerJoinToken(Date.now() + 3_600_000);
      const expired = newServerJoinToken(Date.now() - 1000);
      for (const t of [good, expired]) assert.equal((await call('POST', '/api/v1/namespaces/kube-system/secrets', ADMIN, t.secret)).status, 201);
      const ok = await call('GET', SERVER_JOIN_PATH, good.token);
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.json, BUNDLE);
      const forged = `${good.token.slice(0, 7)}${'x'.repeat(32)}`;
      for (const token of [forged, expired.token, ADMIN, 'abcdef.0123456789abcdef']) {
        assert.equal((await call('GET', SERVER_JOIN_PATH, token)).status, 401, token);
      }
      assert.equal((await call('POST', SERVER_JOIN_PATH, good.token, {})).status, 405);
      // The join token is no API credential.
      assert.equal((await call('GET', '/api/v1/namespaces', good.token)).status, 401);
    });
  });

  it('a server without a shareable datastore answers 404 and says why', async () => {
    await withServer(false, async (_base, call) => {
      const t = newServerJoinToken(Date.now() + 3_600_000);
      assert.equal((await call('POST', '/api/v1/namespaces/kube-system/secrets', ADMIN, t.secret)).status, 201);
      const r = await call('GET', SERVER_JOIN_PATH, t.token);
      assert.equal(r.status, 404);
      assert.match(r.json.message, /SQLite/);
    });
  });
});
