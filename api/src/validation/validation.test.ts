import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pullPolicyFor } from '../defaults/pod.js';
import { isDns1123Label, isDns1123Subdomain, qualifiedNameProblem, validateObjectMeta } from './names.js';
import { validatePodSpec } from './pod.js';
import { validateReplicatedSpec, validateServiceSpec } from './workloads.js';

test('DNS-1123 names and label keys', () => {
  assert.ok(isDns1123Subdomain('web-1.example'));
  assert.ok(!isDns1123Subdomain('Web'));
  assert.ok(!isDns1123Subdomain('a'.repeat(254)));
  assert.ok(isDns1123Label('kube-system'));
  assert.ok(!isDns1123Label('has.dot'));
  assert.equal(qualifiedNameProblem('app.kubernetes.io/name'), undefined);
  assert.ok(qualifiedNameProblem('a/b/c'));
  assert.ok(qualifiedNameProblem('-bad'));
});

test('ObjectMeta: name required, namespace by scope, label values', () => {
  const fields = (m: object, namespaced = true) => validateObjectMeta(m, { namespaced }).map((e) => `${e.type} ${e.field}`);
  assert.deepEqual(fields({ name: 'ok', namespace: 'default' }), []);
  assert.deepEqual(fields({}, false), ['FieldValueRequired metadata.name']);
  assert.deepEqual(fields({ name: 'x' }), ['FieldValueRequired metadata.namespace']);
  assert.deepEqual(fields({ name: 'x', namespace: 'd', labels: { a: 'has space' } }), ['FieldValueInvalid metadata.labels.a']);
});

test('pod spec: containers, unique names, images, enums, ports', () => {
  const errs = validatePodSpec(
    { restartPolicy: 'Sometimes', containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 70000 }] }, { name: 'a' }, { name: 'B', image: 'y' }] },
    'spec',
  ).map((e) => `${e.type} ${e.field}`);
  assert.deepEqual(errs.sort(), [
    'FieldValueDuplicate spec.containers[1].name',
    'FieldValueInvalid spec.containers[0].ports[0].containerPort',
    'FieldValueInvalid spec.containers[2].name',
    'FieldValueNotSupported spec.restartPolicy',
    'FieldValueRequired spec.containers[1].image',
  ]);
  assert.deepEqual(validatePodSpec({ containers: [] }, 'spec').map((e) => e.field), ['spec.containers']);
});

test('workloads: selector must match the template; services need ports', () => {
  const spec = { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } };
  assert.deepEqual(validateReplicatedSpec(spec).map((e) => e.field), ['spec.template.metadata.labels']);
  assert.deepEqual(validateServiceSpec({ type: 'ClusterIP' }).map((e) => e.field), ['spec.ports']);
  assert.deepEqual(validateServiceSpec({ type: 'ExternalName', externalName: 'x.example' }), []);
});

test('imagePullPolicy defaults by tag', () => {
  assert.equal(pullPolicyFor('busybox'), 'Always');
  assert.equal(pullPolicyFor('busybox:latest'), 'Always');
  assert.equal(pullPolicyFor('busybox:1.36'), 'IfNotPresent');
  assert.equal(pullPolicyFor('127.0.0.1:5000/busybox'), 'Always');
  assert.equal(pullPolicyFor('127.0.0.1:5000/busybox@sha256:abc'), 'IfNotPresent');
});

test('pod spec: lifecycle hooks name exactly one handler; sleep within the grace period', () => {
  const spec = (lifecycle: unknown, grace?: number) => ({ ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }), containers: [{ name: 'a', image: 'x', lifecycle }] });
  const errs = (lifecycle: unknown, grace?: number) => validatePodSpec(spec(lifecycle, grace), 'spec').map((e) => `${e.type} ${e.field} ${e.message}`);
  assert.deepEqual(errs({ preStop: { exec: { command: ['true'] } }, postStart: { httpGet: { port: 'http' } } }), []);
  assert.deepEqual(errs({ preStop: { sleep: { seconds: 0 } } }), []);
  assert.deepEqual(errs({ preStop: { sleep: { seconds: 30 } } }), []);
  assert.deepEqual(errs({ preStop: {} }), ['FieldValueRequired spec.containers[0].lifecycle.preStop Required value: must specify a handler type']);
  assert.deepEqual(errs({ postStart: { exec: { command: ['true'] }, sleep: { seconds: 1 } } }), [
    'FieldValueForbidden spec.containers[0].lifecycle.postStart.sleep Forbidden: may not specify more than 1 handler type',
  ]);
  assert.deepEqual(errs({ preStop: { sleep: { seconds: 11 } } }, 10), [
    'FieldValueInvalid spec.containers[0].lifecycle.preStop.sleep.seconds Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds (10)',
  ]);
  assert.deepEqual(errs({ preStop: { sleep: { seconds: -1 } } }).map((e) => e.split(' ')[1]), ['spec.containers[0].lifecycle.preStop.sleep.seconds']);
  assert.deepEqual(errs({ preStop: { exec: { command: [] } } }).map((e) => e.split(' ')[1]), ['spec.containers[0].lifecycle.preStop.exec.command']);
  assert.deepEqual(errs({ postStart: { httpGet: { port: 70000, scheme: 'FTP' } } }).map((e) => e.split(' ')[1]), [
    'spec.containers[0].lifecycle.postStart.httpGet.port',
    'spec.containers[0].lifecycle.postStart.httpGet.scheme',
  ]);
});
