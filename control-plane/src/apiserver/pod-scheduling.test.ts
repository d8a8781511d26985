// The scheduling fields of pods at the real API server (HTTP on port 0, SQLite in a temp dir): a
// gated pod is created with PodScheduled=False/SchedulingGated, gates can be removed but never
// added, a gated pod cannot be created already bound; pod (anti-)affinity, topology spread and
// gates are validated with upstream's paths and messages.
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

  it('affinity, topology spread and gates the scheduler could not honour are 422 with upstream causes', async () => {
    const got = await causes(api.create(PODS, pod('bad', {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: '', labelSelector: { matchLabels: { app: 'x' } }, matchLabelKeys: ['app'] }],
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', namespaces: ['Bad_NS'] } }],
        },
      },
      topologySpreadConstraints: [
        { maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'Sometimes' as 'DoNotSchedule' },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2, nodeTaintsPolicy: 'Maybe' as 'Honor' },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', matchLabelKeys: ['rev'] },
      ],
      schedulingGates: [{ name: 'a.io/g' }, { name: 'a.io/g' }],
    })));
    assert.deepEqual(got.sort(), [
      'FieldValueDuplicate spec.schedulingGates[1]: Duplicate value: "a.io/g"',
      'FieldValueDuplicate spec.topologySpreadConstraints[2]: Duplicate value: "{zone, ScheduleAnyway}"',
      'FieldValueForbidden spec.topologySpreadConstraints[2].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set',
      'FieldValueInvalid spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')',
      'FieldValueInvalid spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100',
      'FieldValueInvalid spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
      'FieldValueInvalid spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero',
      'FieldValueInvalid spec.topologySpreadConstraints[1].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway',
      'FieldValueNotSupported spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
      'FieldValueNotSupported spec.topologySpreadConstraints[1].nodeTaintsPolicy: Unsupported value: "Maybe": supported values: "Honor", "Ignore"',
      'FieldValueRequired spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty',
    ]);
    // A valid set is accepted.
    await api.create(PODS, pod('good', {
      affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'x' } }, namespaceSelector: {} } }] } },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 2, labelSelector: { matchLabels: { app: 'x' } }, matchLabelKeys: ['rev'] }],
    }));
  });
});
