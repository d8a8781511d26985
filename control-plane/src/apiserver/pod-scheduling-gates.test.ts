// spec.schedulingGates at the real API server (HTTP on port 0, SQLite in a temp dir): a gated pod
// is created with PodScheduled=False/SchedulingGated, gates can be removed but never added, and a
// gated pod cannot be created already bound.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { ApiClient, PODS, statusOf, type Pod } from '@nodelet/api';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

describe('pod scheduling gates at the API server', () => {
  let srv: TestApiServer;
  let api: ApiClient;
  before(async () => {
    srv = await startTestApiServer();
    api = new ApiClient({ server: srv.url, token: srv.token, timeoutMs: 10_000 });
  });
  after(async () => {
    api?.close();
    await srv?.close();
  });

  const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
  });
  async function causes(p: Promise<unknown>): Promise<string[]> {
    const err = await p.then(() => assert.fail('expected 422'), (e: unknown) => e);
    assert.ok(hasCode(err, 'ERR_INVALID_ARGUMENT'), String(err));
    assert.equal(statusOf(err)?.code, 422);
    return (statusOf(err)?.details?.causes ?? []).map((c) => `${c.reason} ${c.field}: ${c.message}`);
  }

  it('a gated pod is created with PodScheduled=False reason SchedulingGated; an ungated one without', async () => {
    const gated = await api.create(PODS, pod('gated', { schedulingGates: [{ name: 'example.com/wait' }] }));
    const cond = gated.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['False', 'SchedulingGated', 'Scheduling is blocked due to non-empty scheduling gates']);
    const plain = await api.create(PODS, pod('plain'));
    assert.equal(plain.status?.conditions, undefined);
  });

  it('gates may be removed but not added after creation', async () => {
    await api.create(PODS, pod('two-gates', { schedulingGates: [{ name: 'a.io/one' }, { name: 'a.io/two' }] }));
    const cur = await api.get(PODS, 'two-gates', { namespace: 'default' });
    const added = { ...cur, spec: { ...cur.spec!, schedulingGates: [{ name: 'a.io/one' }, { name: 'a.io/three' }] } };
    assert.deepEqual(await causes(api.update(PODS, added)), [
      "FieldValueForbidden spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'a.io/three'",
    ]);
    const removed = await api.update(PODS, { ...cur, spec: { ...cur.spec!, schedulingGates: [{ name: 'a.io/two' }] } });
    assert.deepEqual(removed.spec?.schedulingGates, [{ name: 'a.io/two' }]);
    const none = await api.update(PODS, { ...removed, spec: { ...removed.spec!, schedulingGates: [] } });
    assert.equal(none.spec?.schedulingGates?.length ?? 0, 0);
    // An ungated pod cannot get gates either.
    const again = { ...none, spec: { ...none.spec!, schedulingGates: [{ name: 'a.io/late' }] } };
    assert.equal((await causes(api.update(PODS, again))).length, 1);
  });

  it('a pod cannot be created bound and gated', async () => {
    assert.deepEqual(await causes(api.create(PODS, pod('bound-gated', { nodeName: 'n1', schedulingGates: [{ name: 'a.io/x' }] }))), [
      'FieldValueForbidden spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared',
    ]);
  });
});
