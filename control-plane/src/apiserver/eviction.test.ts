// pods/eviction against the real API machinery (SQLite in a temp dir): the test plays the
// disruption controller by writing the budget's status itself, so each rule is checked alone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer, type TestReply } from './testing/test-server.js';

describe('pods/eviction honours PodDisruptionBudgets', () => {
  let srv: TestApiServer;
  const call = (method: string, path: string, body?: unknown, contentType?: string): Promise<TestReply> => srv.call(method, path, body, { contentType });
  const NS = '/api/v1/namespaces/evict';
  const PDBS = '/apis/policy/v1/namespaces/evict/poddisruptionbudgets';
  /** A pod bound to a node (so a delete only marks it), in `phase`, Ready or not. */
  const makePod = async (name: string, phase: string, ready: boolean, labels: Record<string, string> = { app: 'web' }): Promise<void> => {
    const c = await call('POST', `${NS}/pods`, { metadata: { name, labels }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1.36' }] } });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const status = { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
    assert.equal((await call('PATCH', `${NS}/pods/${name}/status`, { status }, 'application/merge-patch+json')).status, 200);
  };
  const evict = (name: string, extra: Record<string, unknown> = {}, query = ''): Promise<TestReply> =>
    call('POST', `${NS}/pods/${name}/eviction${query}`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'evict' }, ...extra });
  const getPod = async (name: string): Promise<any> => (await call('GET', `${NS}/pods/${name}`)).json; // eslint-disable-line @typescript-eslint/no-explicit-any
  const getPdb = async (name: string): Promise<any> => (await call('GET', `${PDBS}/${name}`)).json; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Plays the disruption controller: the status of the budget's current generation. */
  const setBudget = async (name: string, counts: { allowed: number; current: number; desired: number; expected: number }): Promise<void> => {
    const pdb = await getPdb(name);
    const status = { observedGeneration: pdb.metadata.generation, disruptionsAllowed: counts.allowed, currentHealthy: counts.current, desiredHealthy: counts.desired, expectedPods: counts.expected };
    const r = await call('PUT', `${PDBS}/${name}/status`, { ...pdb, status });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  };

  before(async () => {
    srv = await startTestApiServer();
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: 'evict' } })).status, 201);
    assert.equal((await call('POST', `${NS}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
    const pdb = await call('POST', PDBS, { metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } });
    assert.equal(pdb.status, 201, JSON.stringify(pdb.json));
    assert.deepEqual(pdb.json.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    for (const n of ['w1', 'w2', 'w3']) await makePod(n, 'Running', true);
  });
  after(() => srv?.close());

  it('takes the one allowed disruption, records it and marks the pod; the next one gets 429 without Retry-After', async () => {
    await setBudget('web', { allowed: 1, current: 3, desired: 2, expected: 3 });
    const ok = await evict('w1');
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    assert.deepEqual([ok.json.kind, ok.json.status], ['Status', 'Success']);
    const w1 = await getPod('w1');
    assert.ok(w1.metadata.deletionTimestamp, 'pod marked for deletion');
    const cond = w1.status.conditions.find((c: { type: string }) => c.type === 'DisruptionTarget');
    assert.deepEqual([cond.status, cond.reason, cond.message], ['True', 'EvictionByEvictionAPI', 'Eviction API: evicting']);
    const pdb = await getPdb('web');
    assert.equal(pdb.status.disruptionsAllowed, 0);
    assert.deepEqual(Object.keys(pdb.status.disruptedPods), ['w1']);
    const allowed = pdb.status.conditions.find((c: { type: string }) => c.type === 'DisruptionAllowed');
    assert.deepEqual([allowed.status, allowed.reason], ['False', 'InsufficientPods']);

    const refused = await evict('w2');
    assert.equal(refused.status, 429);
    assert.equal(refused.json.reason, 'TooManyRequests');
    assert.equal(refused.json.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(refused.json.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 3 currently' }]);
    assert.equal(refused.headers.get('retry-after'), null, 'kubectl must see the refusal, not have client-go retry it');
    assert.equal((await getPod('w2')).metadata.deletionTimestamp, undefined);
  });

  it('a budget whose status lags its generation refuses with Retry-After 10', async () => {
    await setBudget('web', { allowed: 1, current: 2, desired: 2, expected: 3 });
    const pdb = await getPdb('web');
    const upd = await call('PUT', `${PDBS}/web`, { ...pdb, spec: { ...pdb.spec, minAvailable: 1 } });
    assert.equal(upd.json.metadata.generation, pdb.metadata.generation + 1);
    const r = await evict('w2');
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '10');
    assert.deepEqual(r.json.details, { retryAfterSeconds: 10, causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web is still being processed by the server.' }] });
  });

  it('pending pods, and unready pods while the budget is healthy, go without taking a disruption', async () => {
    await setBudget('web', { allowed: 0, current: 2, desired: 2, expected: 3 });
    await makePod('pending', 'Pending', false);
    assert.equal((await evict('pending')).status, 201);
    assert.ok((await getPod('pending')).metadata.deletionTimestamp);
    await makePod('unready', 'Running', false);
    assert.equal((await evict('unready')).status, 201);
    assert.ok((await getPod('unready')).metadata.deletionTimestamp);
    assert.equal((await getPdb('web')).status.disruptedPods, undefined, 'no disruption recorded');
    // With the budget short of healthy pods, an unready pod is guarded like the others.
    await setBudget('web', { allowed: 0, current: 1, desired: 2, expected: 3 });
    await makePod('unready2', 'Running', false);
    assert.equal((await evict('unready2')).status, 429);
  });

  it('dry run changes nothing; a pod selected by two budgets is refused with 500; no budget deletes', async () => {
    await setBudget('web', { allowed: 1, current: 3, desired: 2, expected: 3 });
    const before = await getPdb('web');
    assert.equal((await evict('w2', {}, '?dryRun=All')).status, 201);
    assert.equal((await getPod('w2')).metadata.deletionTimestamp, undefined);
    assert.deepEqual((await getPdb('web')).status, before.status);

    assert.equal((await call('POST', PDBS, { metadata: { name: 'all-web' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } } })).status, 201);
    const two = await evict('w2');
    assert.equal(two.status, 500);
    assert.equal(two.json.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    assert.equal((await getPod('w2')).metadata.deletionTimestamp, undefined);

    await makePod('loner', 'Running', true, { app: 'other' });
    assert.equal((await evict('loner')).status, 201);
    assert.ok((await getPod('loner')).metadata.deletionTimestamp);
  });

  it('refuses an Eviction naming another pod, and one for a missing pod is 404', async () => {
    const r = await call('POST', `${NS}/pods/w3/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'w2' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.message, 'name in URL does not match name in Eviction object');
    assert.equal((await evict('nope')).status, 404);
  });
});
