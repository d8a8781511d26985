// Deleting a namespace deletes its custom resources too (upstream's namespace controller finds the
// namespaced kinds by discovery, not from a built-in list): a CR left behind would reappear in a
// namespace created again under the same name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NAMESPACES, type KubeObject, type ResourceType } from '@nodelet/api';
import { hasCode, pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { widgetCrd, WIDGET_GROUP } from '../../apiserver/apiextensions/testing/fixtures.js';

const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', singular: 'customresourcedefinition', namespaced: false };
const WIDGETS: ResourceType = { group: WIDGET_GROUP, version: 'v1', kind: 'Widget', plural: 'widgets', singular: 'widget', namespaced: true };

describe('namespace deletion and custom resources', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
  });
  after(() => c.close());

  it('a deleted namespace takes its custom resources with it', async () => {
    const client = c.admin;
    await client.create(CRDS, widgetCrd() as unknown as KubeObject);
    await pollUntil('widgets served', async () => {
      try {
        return await client.list(WIDGETS, { namespace: 'default' });
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
        throw err;
      }
    }, { timeoutMs: 10_000 });
    await client.create(NAMESPACES, { metadata: { name: 'crns' } });
    await client.create(WIDGETS, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: 'crns' }, spec: { image: 'busybox' } } as KubeObject, { namespace: 'crns' });
    assert.deepEqual((await client.list(WIDGETS, { namespace: 'crns' })).items.map((w) => w.metadata.name), ['w1']);
    const cm = await c.controllers(['namespace']);
    try {
      await client.delete(NAMESPACES, 'crns');
      await pollUntil('namespace crns removed', async () => {
        try {
          await client.get(NAMESPACES, 'crns');
          return undefined;
        } catch (err) {
          if (hasCode(err, 'ERR_NOT_FOUND')) return true;
          throw err;
        }
      }, { timeoutMs: 15_000 });
      await client.create(NAMESPACES, { metadata: { name: 'crns' } });
      assert.deepEqual((await client.list(WIDGETS, { namespace: 'crns' })).items.map((w) => w.metadata.name), [], 'nothing of the old namespace in the new one');
    } finally {
      await cm.close();
    }
  });

  it('a namespace without spec finalizers is removed by its delete, with nothing to wait for', async () => {
    await c.admin.create(NAMESPACES, { metadata: { name: 'bare' }, spec: { finalizers: [] } });
    const deleted = await c.admin.getRaw('/api/v1/namespaces/bare').then(() => c.admin.delete(NAMESPACES, 'bare'));
    assert.ok(deleted);
    await assert.rejects(c.admin.get(NAMESPACES, 'bare'), (err: unknown) => hasCode(err, 'ERR_NOT_FOUND'));
  });
});
