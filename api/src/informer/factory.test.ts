// The shared informer factory: one informer per resource and scope, started with the factory or
// at once when made later, and none made after close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, systemClock } from '@nodelet/base';
import type { ApiClient } from '../client/api-client.js';
import { CONFIGMAPS, PODS } from '../types/resources.js';
import { InformerFactory } from './factory.js';

describe('InformerFactory', () => {
  it('shares one informer per resource and scope; refuses new ones once closed', async () => {
    const f = new InformerFactory({ client: {} as ApiClient, clock: systemClock, logger: noopLogger });
    const a = f.for(PODS);
    assert.equal(f.for(PODS), a);
    assert.notEqual(f.for(PODS, { fieldSelector: 'spec.nodeName=n1' }), a);
    assert.notEqual(f.for(PODS, { namespace: 'default' }), a);
    assert.notEqual(f.for(CONFIGMAPS), a);
    assert.equal(f.list().length, 4);
    await f.drop(PODS, { namespace: 'default' });
    assert.equal(f.list().length, 3);
    await f.close();
    assert.throws(() => f.for(SECRETS_LIKE), /after the informers were closed/);
  });
});

const SECRETS_LIKE = { ...CONFIGMAPS, plural: 'secrets', kind: 'Secret', singular: 'secret' };
