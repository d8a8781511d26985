// The API server's bearer-token cache: a Secret-backed node token is looked up once per TTL, never
// past its own expiration, and a revoked token stops working within the TTL; static tokens are
// matched without the store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenAuthenticator } from './authenticator.js';
import { createHash } from 'node:crypto';
import { newNodeToken, sha256Hex } from './tokens.js';
import type { ApiObject } from '../object.js';

describe('token authenticator cache', () => {
  it('caches a node token for the TTL, and never past its expiration', async () => {
    let now = Date.UTC(2026, 0, 1);
    const { token, secret } = newNodeToken('n1', now + 4_000);
    let stored: ApiObject | undefined = secret as unknown as ApiObject;
    let reads = 0;
    const authn = createTokenAuthenticator({
      staticTokens: new Map(),
      getSecret: async () => { reads += 1; return stored; },
      now: () => now,
      cacheTtlMs: 10_000,
    });
    assert.equal((await authn.authenticate(token))?.name, 'system:node:n1');
    stored = undefined;
    now += 3_999;
    assert.equal((await authn.authenticate(token))?.name, 'system:node:n1', 'cached: the Secret was not read again');
    assert.equal(reads, 1);
    now += 2;
    assert.equal(await authn.authenticate(token), undefined, 'the token expired before the TTL ended');
    assert.equal(reads, 2);
  });

  it('a revoked token works at most for the TTL', async () => {
    let now = Date.UTC(2026, 0, 1);
    const { token, secret } = newNodeToken('n1');
    let stored: ApiObject | undefined = secret as unknown as ApiObject;
    const authn = createTokenAuthenticator({ staticTokens: new Map(), getSecret: async () => stored, now: () => now, cacheTtlMs: 10_000 });
    assert.ok(await authn.authenticate(token));
    stored = undefined;
    now += 10_001;
    assert.equal(await authn.authenticate(token), undefined);
  });

  it('cacheTtlMs 0 reads the store every time; a static token needs no store', async () => {
    const { token, secret } = newNodeToken('n1');
    let reads = 0;
    const authn = createTokenAuthenticator({
      staticTokens: new Map([['admin-token', { name: 'admin', groups: ['system:masters'] }]]),
      getSecret: async () => { reads += 1; return secret as unknown as ApiObject; },
      now: () => Date.UTC(2026, 0, 1),
      cacheTtlMs: 0,
    });
    for (let i = 0; i < 3; i++) assert.ok(await authn.authenticate(token));
    assert.equal(reads, 3);
    assert.equal((await authn.authenticate('admin-token'))?.name, 'admin');
    assert.equal(reads, 3);
  });
});

describe('sha256Hex', () => {
  it('is the hex SHA-256 of the UTF-8 text (the stored node-token hashes depend on it)', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256Hex('é'), createHash('sha256').update('é', 'utf8').digest('hex'));
  });
});
