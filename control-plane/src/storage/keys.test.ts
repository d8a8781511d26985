import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prefixRangeEnd, prefixRangeEndString } from './keys.js';

describe('prefix range ends', () => {
  it('increments the last byte, dropping trailing 0xff', () => {
    assert.deepEqual([...prefixRangeEnd(Buffer.from('/registry/pods/'))], [...Buffer.from('/registry/pods0')]);
    assert.deepEqual([...prefixRangeEnd(Uint8Array.from([0x61, 0xff, 0xff]))], [0x62]);
    assert.deepEqual([...prefixRangeEnd(Uint8Array.from([0xff]))], []);
  });

  it('string form bounds every key with the prefix and nothing else', () => {
    assert.equal(prefixRangeEndString('/registry/pods/'), '/registry/pods0');
    assert.equal(prefixRangeEndString(''), undefined);
    const end = prefixRangeEndString('/a/é')!;
    const bytes = (s: string) => Buffer.from(s, 'utf8');
    assert.ok(Buffer.compare(bytes('/a/é\u{10ffff}'), bytes(end)) < 0);
    assert.ok(Buffer.compare(bytes('/a/ê'), bytes(end)) >= 0);
  });
});
