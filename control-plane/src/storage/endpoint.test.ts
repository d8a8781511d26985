import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDatastoreEndpoint } from './endpoint.js';

describe('parseDatastoreEndpoint', () => {
  it('defaults to <data-dir>/state.db', () => {
    assert.deepEqual(parseDatastoreEndpoint(undefined, '/var/lib/nodelet'), { kind: 'sqlite', path: '/var/lib/nodelet/state.db' });
    assert.deepEqual(parseDatastoreEndpoint('', '/d'), { kind: 'sqlite', path: '/d/state.db' });
  });

  it('parses sqlite:// with absolute and data-dir-relative paths', () => {
    assert.deepEqual(parseDatastoreEndpoint('sqlite:///srv/k.db', '/d'), { kind: 'sqlite', path: '/srv/k.db' });
    assert.deepEqual(parseDatastoreEndpoint('sqlite://other.db', '/d'), { kind: 'sqlite', path: '/d/other.db' });
  });

  it('parses etcd:// host lists and http(s) URLs', () => {
    assert.deepEqual(parseDatastoreEndpoint('etcd://127.0.0.1:2379,10.0.0.2:2379', '/d'), {
      kind: 'etcd',
      endpoints: ['http://127.0.0.1:2379', 'http://10.0.0.2:2379'],
    });
    assert.deepEqual(parseDatastoreEndpoint('https://etcd.lab:2379', '/d'), { kind: 'etcd', endpoints: ['https://etcd.lab:2379'] });
  });

  it('rejects what it cannot use, saying what would work', () => {
    for (const bad of ['mysql://x', 'sqlite://', 'etcd://', 'etcd://hostonly', 'http://a:2379,nope:']) {
      assert.throws(() => parseDatastoreEndpoint(bad, '/d'), (err: Error & { code?: string }) => err.code === 'ERR_INVALID_ARGUMENT', bad);
    }
  });
});
