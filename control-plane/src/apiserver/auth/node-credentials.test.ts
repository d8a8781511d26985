// The node credential exchange: bootstrap tokens are consumed first and exactly once, cannot take
// over an existing node unless made for it, and node credentials expire and rotate.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newBootstrapToken } from '@nodelet/api';
import { startAuthTestServer, type AuthTestServer } from './testing/auth-server.js';

const PATH = '/apis/nodelet.io/v1/nodecredentials';
const request = (nodeName: string) => ({ apiVersion: 'nodelet.io/v1', kind: 'NodeCredentialRequest', spec: { nodeName } });

describe('node credentials', () => {
  let t: AuthTestServer;
  let now = Date.parse('2026-06-01T00:00:00Z');
  const DAY = 86_400_000;
  before(async () => (t = await startAuthTestServer({ now: () => now, nodeCredentialTtlMs: 30 * DAY })));
  after(() => t.close());

  async function bootstrapToken(nodeName?: string): Promise<string> {
    const { token, secret } = newBootstrapToken(now + DAY, 'test', nodeName);
    assert.equal((await t.call('admin', 'POST', '/api/v1/namespaces/kube-system/secrets', secret)).status, 201);
    return token;
  }
  const nodeTokens = async (node: string): Promise<number> =>
    (await t.call('admin', 'GET', `/api/v1/namespaces/kube-system/secrets?labelSelector=nodelet.io%2Fnode-name%3D${node}`)).json.items.length;

  it('a bootstrap token used by ten parallel requests mints exactly one credential', async () => {
    const token = await bootstrapToken();
    const replies = await Promise.all(Array.from({ length: 10 }, () => t.call({ token }, 'POST', PATH, request('node-p'))));
    const codes = replies.map((r) => r.status).sort();
    assert.deepEqual(codes, [201, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
    assert.equal(await nodeTokens('node-p'), 1);
    assert.equal((await t.call('admin', 'GET', `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${token.slice(0, 6)}`)).status, 404, 'consumed');
  });

  it('an existing node cannot be taken over by a bootstrap token, unless the admin made the token for it', async () => {
    await t.call('admin', 'POST', '/api/v1/nodes', { metadata: { name: 'node-e' } });
    const general = await bootstrapToken();
    const refused = await t.call({ token: general }, 'POST', PATH, request('node-e'));
    assert.equal(refused.status, 409);
    assert.match(refused.json.message, /node "node-e" already exists.*nodelet token create --node-name node-e/);
    assert.equal((await t.call('admin', 'GET', `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${general.slice(0, 6)}`)).status, 200, 'a refused request does not use up the token');
    const forE = await bootstrapToken('node-e');
    assert.equal((await t.call({ token: forE }, 'POST', PATH, request('node-f'))).status, 403, 'a token made for node-e joins only node-e');
    assert.equal((await t.call({ token: forE }, 'POST', PATH, request('node-e'))).status, 201);
  });

  it('a node credential authenticates as its node, renews itself only, and expires', async () => {
    const issued = await t.call({ token: await bootstrapToken() }, 'POST', PATH, request('node-r'));
    assert.equal(issued.status, 201);
    const first = issued.json.status.token as string;
    assert.equal(issued.json.status.expirationTimestamp, new Date(now + 30 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    const whoami = async (token: string) => t.call({ token }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});
    assert.equal((await whoami(first)).json.status.userInfo.username, 'system:node:node-r');
    assert.equal((await t.call({ token: first }, 'POST', PATH, request('node-other'))).status, 403);
    const renewed = await t.call({ token: first }, 'POST', PATH, request('node-r'));
    assert.equal(renewed.status, 201);
    const second = renewed.json.status.token as string;
    assert.equal((await whoami(first)).status, 201, 'the old credential overlaps for a while');
    now += 11 * 60_000;
    assert.equal((await whoami(first)).status, 401, 'then it is gone');
    assert.equal((await whoami(second)).status, 201);
    now += 30 * DAY;
    assert.equal((await whoami(second)).status, 401, 'a credential that is not renewed expires');
  });
});
