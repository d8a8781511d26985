// findForCheck: the mirror's copy when it passes the caller's check, else the store's object (a
// missing or failing copy may be the mirror lagging behind the store).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findForCheck } from './mirror.js';
import type { ServedResource, ServerContext } from './context.js';
import type { ApiObject } from './object.js';
import type { ResourceMirror } from './mirror.js';

const pod = (uid: string): ApiObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid } });

function setup(cached: ApiObject | undefined, stored: ApiObject | undefined): { ctx: ServerContext; served: ServedResource; storeReads: () => number } {
  let reads = 0;
  const def = { group: '', plural: 'pods' };
  const mirror = { get: (ns: string | undefined, name: string) => (ns === 'ns' && name === 'p' ? cached : undefined) } as unknown as ResourceMirror;
  const ctx = { lookupMirrorOf: (d: unknown) => (d === def ? mirror : undefined) } as unknown as ServerContext;
  const served = {
    def,
    registry: {
      find: (ns: string | undefined, name: string) => {
        reads++;
        return Promise.resolve(ns === 'ns' && name === 'p' ? stored : undefined);
      },
    },
  } as unknown as ServedResource;
  return { ctx, served, storeReads: () => reads };
}

describe('findForCheck', () => {
  it('answers from the mirror when its copy passes the check, without reading the store', async () => {
    const { ctx, served, storeReads } = setup(pod('a'), pod('a'));
    assert.equal((await findForCheck(ctx, served, 'ns', 'p', (o) => o.metadata.uid === 'a'))?.metadata.uid, 'a');
    assert.equal(storeReads(), 0);
  });

  it('reads the store when the copy fails the check (the pod was recreated and the mirror is behind)', async () => {
    const { ctx, served, storeReads } = setup(pod('old'), pod('new'));
    assert.equal((await findForCheck(ctx, served, 'ns', 'p', (o) => o.metadata.uid === 'new'))?.metadata.uid, 'new');
    assert.equal(storeReads(), 1);
  });

  it('reads the store on a miss, and for a kind with no mirror', async () => {
    const { ctx, served, storeReads } = setup(undefined, pod('a'));
    assert.equal((await findForCheck(ctx, served, 'ns', 'p'))?.metadata.uid, 'a');
    const bare = setup(undefined, pod('b'));
    assert.equal((await findForCheck({} as ServerContext, bare.served, 'ns', 'p'))?.metadata.uid, 'b');
    assert.equal(storeReads() + bare.storeReads(), 2);
  });
});
