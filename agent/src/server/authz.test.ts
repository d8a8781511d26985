import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeApiAttributes } from './authz.js';

describe('node API authorization attributes (kubelet server/auth.go)', () => {
  it('maps paths to node subresources and methods to verbs', () => {
    assert.deepEqual(nodeApiAttributes('GET', '/stats/summary'), { verb: 'get', subresource: 'stats' });
    assert.deepEqual(nodeApiAttributes('GET', '/metrics/resource'), { verb: 'get', subresource: 'metrics' });
    assert.deepEqual(nodeApiAttributes('GET', '/logs/syslog'), { verb: 'get', subresource: 'log' });
    assert.deepEqual(nodeApiAttributes('GET', '/pods'), { verb: 'get', subresource: 'proxy' });
    assert.deepEqual(nodeApiAttributes('GET', '/containerLogs/ns/p/c'), { verb: 'get', subresource: 'proxy' });
    assert.deepEqual(nodeApiAttributes('POST', '/run/ns/p/c'), { verb: 'create', subresource: 'proxy' });
  });
  it('streams into a pod need create even over a WebSocket GET', () => {
    for (const p of ['/exec/ns/p/c', '/attach/ns/p/c', '/portForward/ns/p']) assert.deepEqual(nodeApiAttributes('GET', p), { verb: 'create', subresource: 'proxy' });
  });
  it('classifies the path the router serves: percent-encoded stream paths are still streams', () => {
    for (const p of ['/%65xec/ns/p/c', '/%61ttach/ns/p/c', '/port%46orward/ns/p', '/exec%2Fns/p/c']) {
      assert.deepEqual(nodeApiAttributes('GET', p), { verb: 'create', subresource: 'proxy' }, p);
    }
    assert.deepEqual(nodeApiAttributes('GET', '/%73tats/summary'), { verb: 'get', subresource: 'stats' });
    assert.throws(() => nodeApiAttributes('GET', '/%zz/ns/p/c'), (err: Error & { code?: string }) => err.code === 'ERR_INVALID_ARGUMENT');
  });
});
