import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { hasCode } from '@nodelet/base';
import { decodeProtobufObject, PROTOBUF_MAGIC } from './decode.js';
import { INTSTR_PROTO, META_PROTO, RESOURCE_PROTO, RUNTIME_PROTO } from './schema-meta.js';
import { APPS_V1_PROTO, AUTHORIZATION_V1_PROTO, CORE_V1_PROTO } from './schema-workloads.js';
import { CORE_V1_POD_PROTO } from './schema-pod.js';
import { AUTHORIZATION_V1_REVIEWS_PROTO, RBAC_V1_PROTO } from './schema-rbac-auth.js';
import { BATCH_V1_PROTO } from './schema-batch.js';
import { POLICY_V1_PROTO } from './schema-policy.js';

// Encodes with the same schema to build envelopes the way client-go lays them out; the e2e suite
// checks the decoder against the real kubectl.
function envelope(apiVersion: string, kind: string, message: string, value: object): Uint8Array {
  const r = new protobuf.Root();
  for (const t of [META_PROTO, RUNTIME_PROTO, RESOURCE_PROTO, INTSTR_PROTO, CORE_V1_PROTO, CORE_V1_POD_PROTO, APPS_V1_PROTO, BATCH_V1_PROTO, POLICY_V1_PROTO]) protobuf.parse(t, r, { keepCase: true });
  const type = r.lookupType(message);
  const raw = type.encode(type.fromObject(value)).finish();
  const unknown = r.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const env = unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Buffer.concat([PROTOBUF_MAGIC, env]);
}

test('decodes a Deployment the way kubectl create deployment sends it', () => {
  const body = envelope('apps/v1', 'Deployment', 'k8s.io.api.apps.v1.Deployment', {
    metadata: { name: 'web', labels: { app: 'web' }, creationTimestamp: {} },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, creationTimestamp: {} },
        spec: { containers: [{ name: 'busybox', image: 'busybox:1', ports: [{ containerPort: 80 }], resources: {} }] },
      },
      strategy: { rollingUpdate: { maxSurge: { type: 1, strVal: '25%' }, maxUnavailable: { type: 0, intVal: 1 } } },
    },
    status: {},
  });
  const { object } = decodeProtobufObject(body);
  assert.deepEqual(object, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'busybox', image: 'busybox:1', ports: [{ containerPort: 80 }], resources: {} }] } },
      strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
    },
    status: {},
  });
});

test('decodes Secret bytes to base64 and times to RFC 3339', () => {
  const body = envelope('v1', 'Secret', 'k8s.io.api.core.v1.Secret', {
    metadata: { name: 's', creationTimestamp: { seconds: 1700000000 } },
    data: { k: Buffer.from('hello') },
    type: 'Opaque',
  });
  const { object } = decodeProtobufObject(body);
  assert.deepEqual(object, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', creationTimestamp: '2023-11-14T22:13:20Z' }, data: { k: 'aGVsbG8=' }, type: 'Opaque' });
});

test('rejects a body without the magic, a truncated message and an unknown kind', () => {
  assert.ok(throwsCode(() => decodeProtobufObject(Buffer.from('{"kind":"Pod"}')), 'ERR_INVALID_ARGUMENT'));
  const good = envelope('v1', 'ConfigMap', 'k8s.io.api.core.v1.ConfigMap', { metadata: { name: 'c' }, data: { a: 'b' } });
  assert.ok(throwsCode(() => decodeProtobufObject(good.subarray(0, good.length - 3)), 'ERR_INVALID_ARGUMENT'));
  const widget = envelope('example.com/v1', 'Widget', 'k8s.io.api.core.v1.ConfigMap', { metadata: { name: 'j' } });
  assert.ok(throwsCode(() => decodeProtobufObject(widget), 'ERR_UNIMPLEMENTED'));
});

function throwsCode(fn: () => unknown, code: Parameters<typeof hasCode>[1]): boolean {
  try {
    fn();
  } catch (err) {
    return hasCode(err, code);
  }
  return false;
}

test('decodes the RBAC kinds and review kinds kubectl sends (create rolebinding, auth can-i --list)', () => {
  const r = new protobuf.Root();
  for (const t of [META_PROTO, RUNTIME_PROTO, RESOURCE_PROTO, INTSTR_PROTO, CORE_V1_PROTO, CORE_V1_POD_PROTO, APPS_V1_PROTO, AUTHORIZATION_V1_PROTO, AUTHORIZATION_V1_REVIEWS_PROTO, RBAC_V1_PROTO]) protobuf.parse(t, r, { keepCase: true });
  const wrap = (apiVersion: string, kind: string, message: string, value: object): Uint8Array => {
    const type = r.lookupType(message);
    const unknown = r.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
    return Buffer.concat([PROTOBUF_MAGIC, unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw: type.encode(type.fromObject(value)).finish() })).finish()]);
  };
  const rb = decodeProtobufObject(wrap('rbac.authorization.k8s.io/v1', 'RoleBinding', 'k8s.io.api.rbac.v1.RoleBinding', {
    metadata: { name: 'view-sa', creationTimestamp: {} },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'ServiceAccount', namespace: 'default', name: 'default' }],
  }));
  assert.deepEqual(rb.object, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'view-sa' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'ServiceAccount', namespace: 'default', name: 'default' }],
  });
  const sar = decodeProtobufObject(wrap('authorization.k8s.io/v1', 'SubjectAccessReview', 'k8s.io.api.authorization.v1.SubjectAccessReview', {
    metadata: {}, spec: { user: 'alice', groups: ['devs'], extra: { scopes: { items: ['a', 'b'] } }, resourceAttributes: { verb: 'get', resource: 'pods' } },
  }));
  assert.deepEqual((sar.object.spec as Record<string, unknown>).extra, { scopes: ['a', 'b'] });
  const ssrr = decodeProtobufObject(wrap('authorization.k8s.io/v1', 'SelfSubjectRulesReview', 'k8s.io.api.authorization.v1.SelfSubjectRulesReview', { metadata: {}, spec: { namespace: 'default' } }));
  assert.deepEqual(ssrr.object.spec, { namespace: 'default' });
});

test('decodes the Job and CronJob kubectl create job|cronjob send', () => {
  const template = { metadata: { creationTimestamp: {} }, spec: { containers: [{ name: 'j', image: 'busybox:1', command: ['echo', 'done'], resources: {} }], restartPolicy: 'Never' } };
  const job = decodeProtobufObject(envelope('batch/v1', 'Job', 'k8s.io.api.batch.v1.Job', { metadata: { name: 'j', creationTimestamp: {} }, spec: { template }, status: {} }));
  assert.deepEqual(job.object, {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' },
    spec: { template: { metadata: {}, spec: { containers: [{ name: 'j', image: 'busybox:1', command: ['echo', 'done'], resources: {} }], restartPolicy: 'Never' } } },
    status: {},
  });
  const cj = decodeProtobufObject(envelope('batch/v1', 'CronJob', 'k8s.io.api.batch.v1.CronJob', {
    metadata: { name: 'c', creationTimestamp: {} },
    spec: { schedule: '*/1 * * * *', jobTemplate: { metadata: { name: 'c', creationTimestamp: {} }, spec: { template } } },
    status: {},
  }));
  assert.deepEqual((cj.object.spec as Record<string, unknown>).schedule, '*/1 * * * *');
  assert.equal(((cj.object.spec as { jobTemplate: { spec: { template: { spec: { restartPolicy: string } } } } }).jobTemplate.spec.template.spec.restartPolicy), 'Never');
});

test('a body with fields the schema does not list is refused (415), not stored without them', () => {
  // The same Job with a field number the server's schema lacks (as a newer or richer client sends).
  const r = new protobuf.Root();
  for (const t of [META_PROTO, RUNTIME_PROTO, RESOURCE_PROTO, INTSTR_PROTO, CORE_V1_PROTO, CORE_V1_POD_PROTO, APPS_V1_PROTO, BATCH_V1_PROTO, POLICY_V1_PROTO]) protobuf.parse(t, r, { keepCase: true });
  r.lookupType('k8s.io.api.core.v1.PodSpec').add(new protobuf.Field('futureField', 999, 'string'));
  const type = r.lookupType('k8s.io.api.batch.v1.Job');
  const raw = type.encode(type.fromObject({ metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }], futureField: 'x' } } } })).finish();
  const unknown = r.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const body = Buffer.concat([PROTOBUF_MAGIC, unknown.encode(unknown.fromObject({ typeMeta: { apiVersion: 'batch/v1', kind: 'Job' }, raw })).finish()]);
  assert.throws(() => decodeProtobufObject(body), (e: Error) => hasCode(e, 'ERR_UNIMPLEMENTED') && /carries fields this server does not decode \(spec\.template\.spec\.#999\); send JSON instead/.test(e.message));
  // Go writes every non-pointer field, zeros too: an unknown field holding its zero value carries nothing.
  const zero = type.encode(type.fromObject({ metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }], futureField: '' } } } })).finish();
  const zeroBody = Buffer.concat([PROTOBUF_MAGIC, unknown.encode(unknown.fromObject({ typeMeta: { apiVersion: 'batch/v1', kind: 'Job' }, raw: zero })).finish()]);
  assert.equal(decodeProtobufObject(zeroBody).object.kind, 'Job');
});

test('decodes a PodDisruptionBudget as kubectl create pdb sends it, and an Eviction with its delete options', () => {
  const pdb = decodeProtobufObject(
    envelope('policy/v1', 'PodDisruptionBudget', 'k8s.io.api.policy.v1.PodDisruptionBudget', {
      metadata: { name: 'web', creationTimestamp: {} },
      spec: { minAvailable: { type: 1, strVal: '50%' }, selector: { matchLabels: { app: 'web' } } },
      status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    }),
  ).object;
  assert.deepEqual(pdb.spec, { minAvailable: '50%', selector: { matchLabels: { app: 'web' } } });
  assert.equal(pdb.kind, 'PodDisruptionBudget');
  const ev = decodeProtobufObject(
    envelope('policy/v1', 'Eviction', 'k8s.io.api.policy.v1.Eviction', {
      metadata: { name: 'p', namespace: 'default', creationTimestamp: {} },
      deleteOptions: { gracePeriodSeconds: 5, dryRun: ['All'], preconditions: { uid: 'u-1' } },
    }),
  ).object;
  assert.deepEqual(ev, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 5, dryRun: ['All'], preconditions: { uid: 'u-1' } } });
});
