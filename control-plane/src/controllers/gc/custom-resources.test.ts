// The garbage collector with custom resources: a custom object owning a built-in one and the
// other way round, the CRD created while the collector runs (it reads CRDs as they come).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIGMAPS, CUSTOMRESOURCEDEFINITIONS, customResourceTypes, type CustomResourceDefinition, type KubeObject } from '@nodelet/api';
import { hasCode, pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { widgetCrd } from '../../apiserver/apiextensions/testing/fixtures.js';

describe('garbage collector and custom resources', () => {
  let c: RealCluster;
  before(async () => {
    c = await startRealCluster();
  });
  after(() => c?.close());

  it('collects dependents of a deleted custom object, and custom dependents of a deleted built-in one', async (t) => {
    const cm = await c.controllers(['garbagecollector']);
    t.after(() => cm.close());
    const crd = await c.admin.resource(CUSTOMRESOURCEDEFINITIONS).create(widgetCrd() as unknown as CustomResourceDefinition);
    const established = await pollUntil('CRD established', async () => {
      const cur = await c.admin.resource(CUSTOMRESOURCEDEFINITIONS).get(crd.metadata.name!);
      return customResourceTypes(cur).length ? cur : undefined;
    }, { timeoutMs: 10_000 });
    const v1 = customResourceTypes(established).find((r) => r.version === 'v1')!;
    const widgets = c.admin.resource(v1, 'default');
    const configMaps = c.admin.resource(CONFIGMAPS, 'default');
    const boss = await widgets.create({ metadata: { name: 'boss' }, spec: { image: 'busybox' } } as KubeObject);
    const ownedByWidget = { apiVersion: v1.group + '/' + v1.version, kind: 'Widget', name: 'boss', uid: boss.metadata.uid! };
    await configMaps.create({ metadata: { name: 'of-boss', ownerReferences: [ownedByWidget] } });
    const cmOwner = await configMaps.create({ metadata: { name: 'owner' } });
    await widgets.create({ metadata: { name: 'minion', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: cmOwner.metadata.uid! }] }, spec: { image: 'busybox' } } as KubeObject);

    const gone = (get: () => Promise<unknown>) => async (): Promise<boolean> => {
      try {
        await get();
        return false;
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return true;
        throw err;
      }
    };
    await widgets.delete('boss');
    await pollUntil('the config map owned by the deleted widget is collected', gone(() => configMaps.get('of-boss')), { timeoutMs: 15_000 });
    await configMaps.delete('owner');
    await pollUntil('the widget owned by the deleted config map is collected', gone(() => widgets.get('minion')), { timeoutMs: 15_000 });
    assert.equal((await widgets.list()).items.length, 0);
  });
});
