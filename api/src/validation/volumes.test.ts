import { test } from 'node:test';
import assert from 'node:assert/strict';
import { localNonReservedPathProblems } from './paths.js';
import { validatePodSpec } from './pod.js';
import { validatePodVolumes } from './volumes.js';

const c = (extra: object = {}) => ({ name: 'c', image: 'busybox', ...extra });
const errsOf = (spec: object) => validatePodSpec(spec, 'spec').map((e) => `${e.type} ${e.field}: ${e.message}`);

test('volume names must be unique DNS-1123 labels, so none can name a host path', () => {
  const errs = errsOf({
    containers: [c()],
    volumes: [
      { name: '../../../../etc/cron.d', configMap: { name: 'cm' } },
      { name: '../x', emptyDir: {} },
      { name: 'ok', emptyDir: {} },
      { name: 'ok', emptyDir: {} },
      { name: '', emptyDir: {} },
      { name: 'Upper', emptyDir: {} },
    ],
  });
  assert.equal(errs.length, 5, errs.join('\n'));
  assert.match(errs[0]!, /^FieldValueInvalid spec\.volumes\[0\]\.name: Invalid value: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/cron\.d": a lowercase RFC 1123 label/);
  assert.match(errs[1]!, /^FieldValueInvalid spec\.volumes\[1\]\.name: Invalid value: "\.\.\/x"/);
  assert.equal(errs[2], 'FieldValueDuplicate spec.volumes[3].name: Duplicate value: "ok"');
  assert.equal(errs[3], 'FieldValueRequired spec.volumes[4].name: Required value');
  assert.match(errs[4]!, /^FieldValueInvalid spec\.volumes\[5\]\.name/);
  assert.deepEqual(errsOf({ containers: [c()], volumes: [{ name: 'x'.repeat(64), emptyDir: {} }] }).map((e) => e.replace(/"x+"/, '"x…"')), [
    'FieldValueInvalid spec.volumes[0].name: Invalid value: "x…": must be no more than 63 characters',
  ]);
});

test('exactly one volume source; secret/configMap names, items paths and modes as upstream', () => {
  const errs = errsOf({
    containers: [c()],
    volumes: [
      { name: 'none' },
      { name: 'two', emptyDir: {}, hostPath: { path: '/tmp' } },
      { name: 's', secret: { defaultMode: 0o1000, items: [{ key: 'k', path: '../k' }, { key: 'k', path: '/abs', mode: -1 }, { key: '', path: '..data' }] } },
      { name: 'cm', configMap: { name: 'cm', defaultMode: 0o777, items: [{ key: 'k', path: 'a/b/c', mode: 0o400 }, { key: 'k', path: 'a/../../b' }] } },
      { name: 'hp', hostPath: { path: '/var/../etc', type: 'Weird' } },
    ],
  });
  assert.deepEqual(errs, [
    'FieldValueRequired spec.volumes[0]: Required value: must specify a volume type',
    'FieldValueForbidden spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type',
    'FieldValueRequired spec.volumes[2].secret.secretName: Required value',
    'FieldValueInvalid spec.volumes[2].secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive',
    `FieldValueInvalid spec.volumes[2].secret.items[0].path: Invalid value: "../k": must not contain '..'`,
    'FieldValueInvalid spec.volumes[2].secret.items[1].path: Invalid value: "/abs": must be a relative path',
    'FieldValueInvalid spec.volumes[2].secret.items[1].mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive',
    'FieldValueRequired spec.volumes[2].secret.items[2].key: Required value',
    `FieldValueInvalid spec.volumes[2].secret.items[2].path: Invalid value: "..data": must not start with '..'`,
    `FieldValueInvalid spec.volumes[3].configMap.items[1].path: Invalid value: "a/../../b": must not contain '..'`,
    `FieldValueInvalid spec.volumes[4].hostPath.path: Invalid value: "/var/../etc": must not contain '..'`,
    'FieldValueNotSupported spec.volumes[4].hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
  ]);
});

test('volumeMounts: existing volume, mountPath set and unique, subPath relative without ..', () => {
  const errs = errsOf({
    volumes: [{ name: 'data', emptyDir: {} }, { name: '../bad', emptyDir: {} }],
    containers: [
      c({
        volumeMounts: [
          { name: 'data', mountPath: '/a', subPath: '../../etc' },
          { name: 'data', mountPath: '/a', subPath: '/etc' },
          { name: 'missing', mountPath: '' },
          { name: '../bad', mountPath: '/b' },
          { name: 'data', mountPath: '/c', subPath: 'x', subPathExpr: '$(POD)' },
          { name: 'data', mountPath: '/d', subPathExpr: '$(POD)/..' },
          { name: 'data', mountPath: '/e', mountPropagation: 'Bidirectional' },
          { name: 'data', mountPath: 'relative/is/fine', subPath: 'a/./b..c/d', mountPropagation: 'HostToContainer' },
        ],
      }),
    ],
  });
  assert.deepEqual(errs.slice(1), [
    `FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "../../etc": must not contain '..'`,
    'FieldValueInvalid spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique',
    'FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path',
    'FieldValueNotFound spec.containers[0].volumeMounts[2].name: Not found: "missing"',
    'FieldValueRequired spec.containers[0].volumeMounts[2].mountPath: Required value',
    'FieldValueNotFound spec.containers[0].volumeMounts[3].name: Not found: "../bad"',
    'FieldValueInvalid spec.containers[0].volumeMounts[4].subPathExpr: Invalid value: "$(POD)": subPathExpr and subPath are mutually exclusive',
    `FieldValueInvalid spec.containers[0].volumeMounts.subPathExpr: Invalid value: "$(POD)/..": must not contain '..'`,
    'FieldValueForbidden spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers',
  ]);
  assert.match(errs[0]!, /^FieldValueInvalid spec\.volumes\[1\]\.name/);
  const privileged = errsOf({ volumes: [{ name: 'd', emptyDir: {} }], containers: [c({ securityContext: { privileged: true }, volumeMounts: [{ name: 'd', mountPath: '/d', mountPropagation: 'Bidirectional' }] })] });
  assert.deepEqual(privileged, []);
});

test('init containers, garbage shapes, and the agent-side entry point', () => {
  const spec = { volumes: [{ name: 'v', emptyDir: {} }], initContainers: [{ name: 'i', image: 'x', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: '..' }] }], containers: [c()] };
  assert.deepEqual(validatePodVolumes(spec, 'spec').map((e) => e.field), ['spec.initContainers[0].volumeMounts.subPath']);
  assert.deepEqual(validatePodSpec(spec, 'spec').map((e) => e.field), ['spec.initContainers[0].volumeMounts.subPath']);
  assert.deepEqual(errsOf({ containers: [c({ volumeMounts: 'x' })], volumes: {} }).map((e) => e.split(':')[0]), [
    'FieldValueInvalid spec.volumes',
    'FieldValueInvalid spec.containers[0].volumeMounts',
  ]);
  assert.deepEqual(errsOf({ containers: [c({ volumeMounts: [null, { name: 3, mountPath: 4, subPath: 5 }] })], volumes: [null, { name: 'v', secret: 'x' }] }).map((e) => e.split(':')[0]), [
    'FieldValueInvalid spec.volumes[0]',
    'FieldValueInvalid spec.volumes[1].secret',
    'FieldValueInvalid spec.containers[0].volumeMounts[0]',
    'FieldValueRequired spec.containers[0].volumeMounts[1].name',
    'FieldValueNotFound spec.containers[0].volumeMounts[1].name',
    'FieldValueRequired spec.containers[0].volumeMounts[1].mountPath',
    'FieldValueInvalid spec.containers[0].volumeMounts[1].subPath',
  ]);
});

test('local non-reserved paths', () => {
  assert.deepEqual(localNonReservedPathProblems('a/b'), []);
  assert.deepEqual(localNonReservedPathProblems('..a'), ["must not start with '..'"]);
  assert.deepEqual(localNonReservedPathProblems('../a'), ["must not contain '..'"]);
  assert.deepEqual(localNonReservedPathProblems('/..'), ['must be a relative path', "must not contain '..'"]);
  assert.deepEqual(localNonReservedPathProblems('a..b/c..'), []);
});

test('the kube-api-access projected volume the ServiceAccount admission adds is valid; bad downward items are not', () => {
  const spec = {
    containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] }],
    volumes: [{
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    }],
  };
  assert.deepEqual(validatePodVolumes(spec, 'spec'), []);
  const bad = structuredClone(spec);
  (bad.volumes[0]!.projected.sources[2] as { downwardAPI: { items: unknown[] } }).downwardAPI.items = [{ path: '../ns' }];
  (bad.volumes[0]!.projected.sources[0] as { serviceAccountToken: { expirationSeconds: number } }).serviceAccountToken.expirationSeconds = 60;
  const fields = validatePodVolumes(bad, 'spec').map((e) => e.field);
  assert.ok(fields.includes('spec.volumes[0].projected.sources[2].downwardAPI.items[0].path'), fields.join());
  assert.ok(fields.includes('spec.volumes[0].projected.sources[2].downwardAPI.items[0]'), fields.join());
  assert.ok(fields.includes('spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds'), fields.join());
});
