import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseEncryptionConfig } from './config.js';

const KEY = '/registry/secrets/default/s1';
const plain = Buffer.from('{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}');
const b64 = (n: number): string => randomBytes(n).toString('base64');

/** The one transformer of a config with these providers (for resource "secrets"). */
function transformer(providers: unknown[]): ReturnType<typeof parseEncryptionConfig>[number]['transformer'] {
  const doc = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers }] };
  return parseEncryptionConfig(JSON.stringify(doc), 'test.yaml')[0]!.transformer;
}

const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('encryption providers (stored format as kube-apiserver)', () => {
  for (const [provider, size] of [['aescbc', 32], ['aescbc', 16], ['aesgcm', 16], ['aesgcm', 24], ['aesgcm', 32], ['secretbox', 32]] as const) {
    it(`${provider} (${size}-byte key) round-trips behind k8s:enc:${provider}:v1:<key name>:`, () => {
      const t = transformer([{ [provider]: { keys: [{ name: 'k1', secret: b64(size) }] } }]);
      const stored = t.toStorage(plain, KEY);
      assert.ok(text(stored).startsWith(`k8s:enc:${provider}:v1:k1:`));
      assert.ok(!text(stored).includes('password'), 'no plaintext in the stored value');
      assert.deepEqual(Buffer.from(t.fromStorage(stored, KEY).value), plain);
      // A fresh IV/nonce per write: the same plaintext never stores the same bytes.
      assert.notDeepEqual(Buffer.from(t.toStorage(plain, KEY)), Buffer.from(stored));
    });
  }

  it('aescbc: 16-byte IV, then the PKCS#7-padded plaintext in CBC mode (decrypted here with Node directly)', () => {
    const key = randomBytes(32);
    const t = transformer([{ aescbc: { keys: [{ name: 'k', secret: key.toString('base64') }] } }]);
    const body = Buffer.from(t.toStorage(plain, KEY)).subarray('k8s:enc:aescbc:v1:k:'.length);
    assert.equal((body.length - 16) % 16, 0);
    const d = createDecipheriv('aes-256-cbc', key, body.subarray(0, 16));
    assert.deepEqual(Buffer.concat([d.update(body.subarray(16)), d.final()]), plain);
  });

  it('aesgcm: 12-byte nonce ‖ ciphertext ‖ 16-byte tag, with the storage key as authenticated data', () => {
    const key = randomBytes(32);
    const t = transformer([{ aesgcm: { keys: [{ name: 'k', secret: key.toString('base64') }] } }]);
    const stored = t.toStorage(plain, KEY);
    const body = Buffer.from(stored).subarray('k8s:enc:aesgcm:v1:k:'.length);
    assert.equal(body.length, 12 + plain.length + 16);
    const d = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12)).setAAD(Buffer.from(KEY));
    d.setAuthTag(body.subarray(body.length - 16));
    assert.deepEqual(Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]), plain);
    // Copied under another key, the value no longer authenticates.
    assert.throws(() => t.fromStorage(stored, '/registry/secrets/default/other'), /cipher: message authentication failed/);
  });

  it('secretbox: 24-byte nonce ‖ 16-byte Poly1305 tag ‖ ciphertext', () => {
    const t = transformer([{ secretbox: { keys: [{ name: 'k', secret: b64(32) }] } }]);
    const body = Buffer.from(t.toStorage(plain, KEY)).subarray('k8s:enc:secretbox:v1:k:'.length);
    assert.equal(body.length, 24 + 16 + plain.length);
  });

  it('several keys: the first writes, every one reads', () => {
    const [k1, k2] = [b64(32), b64(32)];
    const old = transformer([{ aescbc: { keys: [{ name: 'old', secret: k1 }] } }]);
    const rotated = transformer([{ aescbc: { keys: [{ name: 'new', secret: k2 }, { name: 'old', secret: k1 }] } }]);
    const written = old.toStorage(plain, KEY);
    assert.deepEqual(Buffer.from(rotated.fromStorage(written, KEY).value), plain);
    // Read with the second key: stale, so an unchanged update still rewrites it with the first.
    assert.equal(rotated.fromStorage(written, KEY).stale, true);
    assert.equal(rotated.fromStorage(rotated.toStorage(plain, KEY), KEY).stale, false);
    assert.ok(text(rotated.toStorage(plain, KEY)).startsWith('k8s:enc:aescbc:v1:new:'));
  });

  it('several providers: the first writes; a value of a later one (or plaintext, with identity) still reads', () => {
    const gcm = { aesgcm: { keys: [{ name: 'g', secret: b64(32) }] } };
    const cbc = { aescbc: { keys: [{ name: 'c', secret: b64(32) }] } };
    const both = transformer([gcm, cbc, { identity: {} }]);
    assert.ok(text(both.toStorage(plain, KEY)).startsWith('k8s:enc:aesgcm:v1:g:'));
    assert.deepEqual(Buffer.from(both.fromStorage(transformer([cbc]).toStorage(plain, KEY), KEY).value), plain);
    assert.deepEqual(Buffer.from(both.fromStorage(plain, KEY).value), plain);
    // identity first: writes plaintext (decrypting a store), still reads encrypted values.
    const decrypting = transformer([{ identity: {} }, cbc]);
    assert.deepEqual(Buffer.from(decrypting.toStorage(plain, KEY)), plain);
    assert.deepEqual(Buffer.from(decrypting.fromStorage(transformer([cbc]).toStorage(plain, KEY), KEY).value), plain);
  });

  it('a value no configured key reads fails with upstream\'s messages', () => {
    const written = transformer([{ aescbc: { keys: [{ name: 'gone', secret: b64(32) }] } }]).toStorage(plain, KEY);
    const other = transformer([{ aescbc: { keys: [{ name: 'k2', secret: b64(32) }] } }]);
    assert.throws(() => other.fromStorage(written, KEY), { message: 'no matching key was found for the provided AES transformer' });
    // Same key name, different secret: GCM's tag does not verify (CBC, unauthenticated, would
    // fail only on the padding, and only most of the time).
    const gcmWritten = transformer([{ aesgcm: { keys: [{ name: 'k', secret: b64(32) }] } }]).toStorage(plain, KEY);
    const sameName = transformer([{ aesgcm: { keys: [{ name: 'k', secret: b64(32) }] } }]);
    assert.throws(() => sameName.fromStorage(gcmWritten, KEY), { message: 'cipher: message authentication failed' });
    // Only identity: encrypted data is refused, nothing else matches.
    assert.throws(() => transformer([{ identity: {} }]).fromStorage(written, KEY), { message: 'no matching prefix found' });
    // No identity: plaintext is not read as if it were encrypted.
    assert.throws(() => other.fromStorage(plain, KEY), { message: 'no matching prefix found' });
    const box = transformer([{ secretbox: { keys: [{ name: 'gone', secret: b64(32) }] } }]);
    const boxWritten = transformer([{ secretbox: { keys: [{ name: 'gone', secret: b64(32) }] } }]).toStorage(plain, KEY);
    assert.throws(() => box.fromStorage(boxWritten, KEY), { message: 'output array was not large enough for encryption' });
  });
});
