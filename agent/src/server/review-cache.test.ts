// The node API's TokenReview and SubjectAccessReview caches (kubelet's webhook cacheTTL and
// cacheAuthorizedTTL / cacheUnauthorizedTTL): answers are reused for their TTL on the agent's
// clock, an expired answer is asked again, and a TTL of 0 asks every time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { ApiClient } from '@nodelet/api';
import { NodeApiAuthenticator } from './authn.js';
import { NodeApiAuthorizer } from './authz.js';

/** An API client whose `create` answers reviews from `answer` and counts the calls. */
function reviews(answer: () => object): { api: ApiClient; calls: () => number } {
  let n = 0;
  const api = { create: async () => { n += 1; return answer(); } } as unknown as ApiClient;
  return { api, calls: () => n };
}

function bearer(token: string): IncomingMessage {
  return { socket: {}, headers: { authorization: `Bearer ${token}` } } as unknown as IncomingMessage;
}

describe('node API review caches', () => {
  it('a TokenReview answer is reused for cacheTTL, then asked again', async () => {
    const clock = new FakeClock();
    let user = 'alice';
    const r = reviews(() => ({ status: { authenticated: true, user: { username: user, groups: [] } } }));
    const authn = new NodeApiAuthenticator({ api: r.api, clock, log: noopLogger, anonymous: false, webhook: true, cacheTTLMs: 120_000, clientCA: false });
    assert.equal((await authn.authenticate(bearer('t1'))).user, 'alice');
    user = 'bob';
    clock.advance(119_999);
    assert.equal((await authn.authenticate(bearer('t1'))).user, 'alice');
    assert.equal(r.calls(), 1);
    assert.equal((await authn.authenticate(bearer('t2'))).user, 'bob', 'another token is its own entry');
    clock.advance(2);
    assert.equal((await authn.authenticate(bearer('t1'))).user, 'bob');
    assert.equal(r.calls(), 3);
  });

  it('cacheTTL 0 asks the API server for every request', async () => {
    const r = reviews(() => ({ status: { authenticated: true, user: { username: 'alice' } } }));
    const authn = new NodeApiAuthenticator({ api: r.api, clock: new FakeClock(), log: noopLogger, anonymous: false, webhook: true, cacheTTLMs: 0, clientCA: false });
    for (let i = 0; i < 3; i++) await authn.authenticate(bearer('t'));
    assert.equal(r.calls(), 3);
  });

  it('allowed and denied SubjectAccessReview answers live for their own TTLs', async () => {
    const clock = new FakeClock();
    let allowed = true;
    const r = reviews(() => ({ status: { allowed } }));
    const authz = new NodeApiAuthorizer({ api: r.api, nodeName: 'n1', clock, log: noopLogger, mode: 'Webhook', cacheAuthorizedTTLMs: 300_000, cacheUnauthorizedTTLMs: 30_000 });
    assert.equal((await authz.authorize('u', ['g'], 'GET', '/pods')).allowed, true);
    allowed = false;
    clock.advance(299_999);
    assert.equal((await authz.authorize('u', ['g'], 'GET', '/pods')).allowed, true, 'still the cached allow');
    clock.advance(2);
    assert.equal((await authz.authorize('u', ['g'], 'GET', '/pods')).allowed, false);
    allowed = true;
    clock.advance(29_999);
    assert.equal((await authz.authorize('u', ['g'], 'GET', '/pods')).allowed, false, 'still the cached deny');
    clock.advance(2);
    assert.equal((await authz.authorize('u', ['g'], 'GET', '/pods')).allowed, true);
    assert.equal(r.calls(), 3);
  });
});
