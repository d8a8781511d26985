// The two webhook configuration kinds served, defaulted and validated as kube-apiserver does (v1).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../../testing/test-server.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

const hook = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'check.example.com',
  clientConfig: { url: 'https://127.0.0.1:9443/check' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...over,
});

describe('admissionregistration.k8s.io/v1 webhook configurations', () => {
  let srv: TestApiServer;
  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  const causes = (json: { details?: { causes?: Array<{ field: string; message: string }> } }): string[] => (json.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

  it('are discovered and filled with v1 defaults', async () => {
    const disc = await srv.call('GET', '/apis/admissionregistration.k8s.io/v1');
    assert.deepEqual(disc.json.resources.map((r: { name: string }) => r.name).sort(), ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']);
    const m = await srv.call('POST', MWC, { metadata: { name: 'm' }, webhooks: [hook({ clientConfig: { service: { namespace: 'default', name: 'svc' } } })] });
    assert.equal(m.status, 201, JSON.stringify(m.json));
    const h = m.json.webhooks[0];
    assert.equal(h.failurePolicy, 'Fail');
    assert.equal(h.matchPolicy, 'Equivalent');
    assert.equal(h.timeoutSeconds, 10);
    assert.equal(h.reinvocationPolicy, 'Never');
    assert.deepEqual(h.namespaceSelector, {});
    assert.deepEqual(h.objectSelector, {});
    assert.equal(h.rules[0].scope, '*');
    assert.equal(h.clientConfig.service.port, 443);
    const v = await srv.call('POST', VWC, { metadata: { name: 'v' }, webhooks: [hook()] });
    assert.equal(v.status, 201, JSON.stringify(v.json));
    assert.equal(v.json.webhooks[0].reinvocationPolicy, undefined);
    const table = await srv.call('GET', VWC, undefined, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Webhooks', 'Age']);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 2), ['v', 1]);
  });

  it('refuses what upstream refuses, naming each field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [hook({ clientConfig: {} }), 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
      [hook({ clientConfig: { url: 'https://a/', service: { namespace: 'd', name: 's' } } }), 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
      [hook({ clientConfig: { url: 'http://a/x' } }), `webhooks[0].clientConfig.url: Invalid value: "http://a/x": 'https' is the only allowed URL scheme`],
      [hook({ sideEffects: undefined }), 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
      [hook({ sideEffects: 'Some' }), 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
      [hook({ admissionReviewVersions: ['v1beta1'] }), 'webhooks[0].admissionReviewVersions: Invalid value: ["v1beta1"]: must include at least one of v1'],
      [hook({ timeoutSeconds: 31 }), 'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
      [hook({ name: 'two.parts' }), 'webhooks[0].name: Invalid value: "two.parts": should be a domain with at least three segments separated by dots'],
      [hook({ failurePolicy: 'Maybe' }), 'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
      [hook({ matchConditions: [{ name: 'a', expression: 'true' }] }), 'webhooks[0].matchConditions: Forbidden: CEL match conditions are not supported by this server'],
    ];
    for (const [i, [h, want]] of cases.entries()) {
      const r = await srv.call('POST', VWC, { metadata: { name: `bad-${i}` }, webhooks: [h] });
      assert.equal(r.status, 422, want);
      assert.ok(causes(r.json).includes(want), `${want}\n  got ${causes(r.json).join('\n  ')}`);
    }
    const dup = await srv.call('POST', VWC, { metadata: { name: 'dup' }, webhooks: [hook(), hook()] });
    assert.ok(causes(dup.json).includes('webhooks[1].name: Duplicate value: "check.example.com"'), causes(dup.json).join('\n'));
  });
});
