// stored-json.ts: both texts are exactly what JSON.stringify of the stored and the served form gives.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiObject } from './object.js';
import { storedJson } from './stored-json.js';

const TYPE = { apiVersion: 'v1', kind: 'Pod' };

/** What the registry stored and the create handler replied before stored-json.ts. */
function expected(obj: ApiObject, rv: string): { stored: string; served: string } {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const served = structuredClone(obj);
  delete served.metadata.resourceVersion;
  served.metadata.resourceVersion = rv;
  return { stored: JSON.stringify({ ...obj, metadata: meta }), served: JSON.stringify({ ...TYPE, ...served }) };
}

describe('storedJson', () => {
  const cases: Array<[string, ApiObject]> = [
    ['a typical pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd', uid: 'u', labels: { 'a/b': 'ü"\\' } }, spec: { containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Pending' } }],
    ['type fields last (a client that sent none)', { metadata: { name: 'p' }, spec: { x: 1 }, apiVersion: 'v1', kind: 'Pod' }],
    ['no type fields at all', { metadata: { name: 'p' }, spec: {} } as ApiObject],
    ['empty metadata, undefined and function fields left out', { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: undefined, status: { a: undefined, b: [undefined] } } as unknown as ApiObject],
    ['nothing but type and metadata', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }],
    ['kind missing', { apiVersion: 'v1', metadata: { name: 'p' }, spec: {} } as ApiObject],
    ['a resourceVersion the client sent', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '7', uid: 'u' } }],
  ];
  for (const [what, obj] of cases) {
    it(what, () => {
      const got = storedJson(obj, TYPE);
      const want = expected(obj, '42');
      assert.equal(got.stored, want.stored);
      assert.equal(got.served('42'), want.served);
    });
  }
});
