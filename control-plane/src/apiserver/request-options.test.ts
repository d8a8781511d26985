// Request options as kube-apiserver reads and validates them: dryRun=All on every write (nothing
// persisted, no watch event), invalid dryRun / fieldManager / DeleteOptions refused before any
// write, resourceVersion(Match) checked, booleans and integers parsed like upstream's codec.
// A real server over SQLite on port 0.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALLOCATION_LEDGER_KEY } from './handlers/allocation-ledger.js';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer, type TestReply } from './testing/test-server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('request options', () => {
  let srv: TestApiServer;
  const call = (method: string, path: string, body?: unknown, contentType?: string): Promise<TestReply> => srv.call(method, path, body, { contentType });
  const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
  const exists = async (path: string): Promise<boolean> => (await call('GET', path)).status === 200;

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('dryRun other than All is refused with upstream\'s 422 on create, update, patch and delete; nothing is written', async () => {
    const create = await call('POST', `${CMS}?dryRun=all`, cm('lower'));
    assert.equal(create.status, 422);
    assert.equal(create.json.message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"all"}: supported values: "All"');
    assert.equal(await exists(`${CMS}/lower`), false);
    assert.equal((await call('POST', CMS, cm('kept'))).status, 201);
    const put = await call('PUT', `${CMS}/kept?dryRun=`, cm('kept', { a: '2' }));
    assert.equal(put.status, 422);
    assert.match(put.json.message, /^UpdateOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value: \[\]string\{""\}/);
    const patch = await call('PATCH', `${CMS}/kept?dryRun=true`, { data: { a: '3' } }, 'application/merge-patch+json');
    assert.equal(patch.status, 422);
    assert.match(patch.json.message, /^PatchOptions\.meta\.k8s\.io/);
    const del = await call('DELETE', `${CMS}/kept?dryRun=all`);
    assert.equal(del.status, 422);
    assert.equal(del.json.message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"all"}: supported values: "All"');
    const delBody = await call('DELETE', `${CMS}/kept`, { dryRun: ['Al'] });
    assert.equal(delBody.status, 422);
    const coll = await call('DELETE', `${CMS}?dryRun=x`);
    assert.equal(coll.status, 422);
    assert.equal((await call('GET', `${CMS}/kept`)).json.data.a, '1');
  });

  it('malformed DeleteOptions bodies are a 400 and delete nothing', async () => {
    assert.equal((await call('POST', CMS, cm('victim'))).status, 201);
    for (const body of ['{', '[]', '"x"', '{"kind":"Pod"}', '{"gracePeriodSeconds":"0"}', '{"dryRun":"All"}', '{"propagationPolicy":1}', '{"preconditions":[]}']) {
      const r = await call('DELETE', `${CMS}/victim`, body);
      assert.equal(r.status, 400, `${body}: ${JSON.stringify(r.json)}`);
    }
    const policy = await call('DELETE', `${CMS}/victim`, { propagationPolicy: 'Sideways' });
    assert.equal(policy.status, 422);
    assert.equal(policy.json.message, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
    const both = await call('DELETE', `${CMS}/victim`, { propagationPolicy: 'Orphan', orphanDependents: true });
    assert.equal(both.status, 422);
    assert.equal((await call('DELETE', `${CMS}/victim?gracePeriodSeconds=soon`)).status, 400);
    assert.equal(await exists(`${CMS}/victim`), true);
  });

  it('dryRun=All runs every write in full and persists nothing, with no watch event', async () => {
    const list = await call('GET', CMS);
    const ac = new AbortController();
    const watch = await fetch(`${srv.url}${CMS}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, { headers: { Authorization: `Bearer ${TOKEN}` }, signal: ac.signal });
    const created = await call('POST', `${CMS}?dryRun=All`, cm('dry'));
    assert.equal(created.status, 201);
    assert.equal(created.json.metadata.name, 'dry');
    assert.ok(created.json.metadata.uid);
    assert.equal(await exists(`${CMS}/dry`), false);
    const invalid = await call('POST', `${CMS}?dryRun=All`, cm('Not_A_Name'));
    assert.equal(invalid.status, 422, 'validation runs in a dry run');
    assert.equal((await call('POST', CMS, cm('real'))).status, 201);
    const put = await call('PUT', `${CMS}/real?dryRun=All`, cm('real', { a: 'put' }));
    assert.equal(put.status, 200);
    assert.equal(put.json.data.a, 'put');
    for (const [type, body] of [
      ['application/merge-patch+json', { data: { a: 'merge' } }],
      ['application/strategic-merge-patch+json', { data: { a: 'smp' } }],
      ['application/json-patch+json', [{ op: 'replace', path: '/data/a', value: 'json' }]],
    ] as const) {
      const r = await call('PATCH', `${CMS}/real?dryRun=All`, body, type);
      assert.equal(r.status, 200, type);
      assert.notEqual(r.json.data.a, '1', type);
    }
    const applied = await call('PATCH', `${CMS}/applied?dryRun=All&fieldManager=me`, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: x}\n', 'application/apply-patch+yaml');
    assert.equal(applied.status, 201);
    assert.equal(await exists(`${CMS}/applied`), false);
    assert.equal((await call('DELETE', `${CMS}/real?dryRun=All`)).status, 200);
    assert.equal((await call('DELETE', `${CMS}?dryRun=All`)).status, 200);
    assert.equal((await call('DELETE', `${CMS}/real`, { dryRun: ['All'] })).status, 200);
    assert.equal((await call('GET', `${CMS}/real`)).json.data.a, '1');
    // The last write: a real one after all the dry ones, so the first event must be this one.
    assert.equal((await call('POST', CMS, cm('last'))).status, 201);
    const reader = watch.body!.getReader();
    let text = '';
    while (!text.includes('"last"')) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const seen = text.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    assert.deepEqual(seen.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED real', 'ADDED last']);
  });

  it('a dry-run Service gets an address but reserves none; a dry-run scale changes nothing', async () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'dry-svc' }, spec: { ports: [{ port: 80 }] } };
    const r = await call('POST', '/api/v1/namespaces/default/services?dryRun=All', svc);
    assert.equal(r.status, 201);
    assert.match(r.json.spec.clusterIP, /^10\.96\./);
    assert.equal(await srv.store.get(ALLOCATION_LEDGER_KEY), undefined);
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    assert.equal((await call('POST', DEPLOYS, deploy)).status, 201);
    const scaled = await call('PATCH', `${DEPLOYS}/d/scale?dryRun=All`, { spec: { replicas: 5 } }, 'application/merge-patch+json');
    assert.equal(scaled.status, 200);
    assert.equal(scaled.json.spec.replicas, 5);
    assert.equal((await call('GET', `${DEPLOYS}/d`)).json.spec.replicas, 1);
    const typo = await call('PATCH', `${DEPLOYS}/d/scale?fieldValidation=Strict`, { spec: { replica: 5 } }, 'application/merge-patch+json');
    assert.equal(typo.status, 400);
    assert.equal(typo.json.message, 'strict decoding error: unknown field "spec.replica"');
  });

  it('fieldManager: at most 128 bytes, printable (422 as upstream)', async () => {
    assert.equal((await call('POST', `${CMS}?fieldManager=${'m'.repeat(128)}`, cm('fm128'))).status, 201);
    const long = await call('POST', `${CMS}?fieldManager=${'m'.repeat(129)}`, cm('fm129'));
    assert.equal(long.status, 422);
    assert.equal(long.json.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes');
    const ctl = await call('PATCH', `${CMS}/fm128?fieldManager=a%01`, { data: { b: '2' } }, 'application/merge-patch+json');
    assert.equal(ctl.status, 422);
    assert.match(ctl.json.message, /invalid character U\+0001 \(at position 1\)/);
    assert.equal(await exists(`${CMS}/fm129`), false);
  });

  it('resourceVersion must be a number and resourceVersionMatch a valid one for reads and writes', async () => {
    const list = await call('GET', `${CMS}?resourceVersion=abc`);
    assert.equal(list.status, 400);
    assert.equal(list.json.message, 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax');
    assert.equal((await call('GET', `${CMS}?watch=true&resourceVersion=-1`)).status, 400);
    assert.equal((await call('GET', `${CMS}/kept?resourceVersion=1e3`)).status, 400);
    const match = await call('GET', `${CMS}?resourceVersion=1&resourceVersionMatch=Newest`);
    assert.equal(match.status, 422);
    assert.equal(match.json.message, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""');
    assert.equal((await call('GET', `${CMS}?resourceVersion=0&resourceVersionMatch=Exact`)).status, 422);
    assert.equal((await call('GET', `${CMS}?watch=1&resourceVersionMatch=NotOlderThan`)).status, 422);
    const current = (await call('GET', `${CMS}/kept`)).json;
    const put = await call('PUT', `${CMS}/kept`, { ...current, metadata: { ...current.metadata, resourceVersion: 'x1' } });
    assert.equal(put.status, 400);
    assert.match(put.json.message, /^invalid resource version/);
    const limit = await call('GET', `${CMS}?limit=ten`);
    assert.equal(limit.status, 400);
    assert.equal(limit.json.message, 'strconv.ParseInt: parsing "ten": invalid syntax');
  });

  it('booleans read as upstream: watch=True watches, watch=0 and watch=FALSE list', async () => {
    const ac = new AbortController();
    const r = await fetch(`${srv.url}${CMS}?watch=True&timeoutSeconds=5`, { headers: { Authorization: `Bearer ${TOKEN}` }, signal: ac.signal });
    const reader = r.body!.getReader();
    const first = JSON.parse(new TextDecoder().decode((await reader.read()).value).split('\n')[0]!);
    ac.abort();
    assert.equal(first.type, 'ADDED');
    for (const v of ['0', 'FALSE', 'false']) assert.equal((await call('GET', `${CMS}?watch=${v}`)).json.kind, 'ConfigMapList', v);
  });
});
