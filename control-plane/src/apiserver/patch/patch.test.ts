import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiObject } from '../object.js';
import { StatusError } from '../status.js';
import { mergePatch } from '@nodelet/api';
import { applyPatch, patchTypeOf, parsePatchBody } from './apply.js';
import { strategicMergePatch } from './strategic-merge.js';

const deployment = (): ApiObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' }, finalizers: ['a'] },
  spec: {
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    template: {
      spec: {
        containers: [
          { name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }] },
          { name: 'sidecar', image: 'busybox:1' },
        ],
      },
    },
  },
});

test('kubectl set image: containers merge by name, ports are kept, order follows $setElementOrder', () => {
  const patch = { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'nginx' }], containers: [{ image: 'nginx:1.27', name: 'nginx' }] } } } };
  const out = strategicMergePatch(deployment(), patch, 'Deployment') as ApiObject;
  const cs = (out.spec as any).template.spec.containers; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(cs.map((c: { name: string }) => c.name), ['sidecar', 'nginx']);
  assert.equal(cs[1].image, 'nginx:1.27');
  assert.deepEqual(cs[1].ports, [{ containerPort: 80, protocol: 'TCP' }]);
});

test('SMP directives: $patch delete/replace, null, $retainKeys, $deleteFromPrimitiveList, set-merged finalizers', () => {
  const out = strategicMergePatch(
    deployment(),
    {
      metadata: { labels: { app: null, tier: 'x' }, finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        strategy: { $retainKeys: ['type'], type: 'Recreate' },
        template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }, { name: 'nginx', env: [{ name: 'B', value: '2' }] }] } },
      },
    },
    'Deployment',
  ) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(out.metadata.labels, { tier: 'x' });
  assert.deepEqual(out.metadata.finalizers, ['b']);
  assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
  assert.deepEqual(out.spec.template.spec.containers.map((c: { name: string }) => c.name), ['nginx']);
  assert.deepEqual(out.spec.template.spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
  const replaced = strategicMergePatch(deployment(), { spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] } } } }, 'Deployment') as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(replaced.spec.template.spec.containers, [{ name: 'only', image: 'x' }]);
});

test('SMP: Service ports merge by port, node taints are atomic, missing merge key is a 400', () => {
  const svc: ApiObject = { metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
  const out = strategicMergePatch(svc, { spec: { ports: [{ port: 80, name: 'http' }] } }, 'Service') as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(out.spec.ports, [{ port: 80, targetPort: 8080, name: 'http' }, { port: 443 }]);
  const node: ApiObject = { metadata: { name: 'n' }, spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] } };
  assert.deepEqual((strategicMergePatch(node, { spec: { taints: [{ key: 'b', effect: 'NoSchedule' }] } }, 'Node') as any).spec.taints, [{ key: 'b', effect: 'NoSchedule' }]); // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.throws(() => strategicMergePatch(deployment(), { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }, 'Deployment'), StatusError);
});

test('merge patch is RFC 7386: lists replace, null deletes', () => {
  assert.deepEqual(mergePatch({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { c: null, e: 1 } }), { a: [3], b: { d: 2, e: 1 } });
  const out = applyPatch('merge', deployment(), { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'x' }] } } } }, 'Deployment') as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.deepEqual(out.spec.template.spec.containers, [{ name: 'nginx', image: 'x' }]);
});

test('JSON patch applies operations and reports failures as Status errors', () => {
  const out = applyPatch('json', deployment(), [{ op: 'replace', path: '/metadata/labels/app', value: 'v2' }], 'Deployment');
  assert.equal(out.metadata.labels?.app, 'v2');
  assert.throws(() => applyPatch('json', deployment(), [{ op: 'remove', path: '/nope/x' }], 'Deployment'), (e: unknown) => e instanceof StatusError && e.code === 400);
  assert.throws(() => applyPatch('json', deployment(), [{ op: 'test', path: '/metadata/name', value: 'other' }], 'Deployment'), (e: unknown) => e instanceof StatusError && e.code === 422);
});

test('patch content types: four are known, others are 415; bodies must have the right shape', () => {
  assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'strategic');
  assert.equal(patchTypeOf('application/apply-patch+yaml; charset=utf-8'), 'apply');
  assert.throws(() => patchTypeOf('application/json'), (e: unknown) => e instanceof StatusError && e.code === 415);
  assert.throws(() => parsePatchBody('json', Buffer.from('{}')), (e: unknown) => e instanceof StatusError && e.code === 400);
  assert.deepEqual(parsePatchBody('apply', Buffer.from('metadata:\n  name: x\n')), { metadata: { name: 'x' } });
});

test('JSON patch bounds: 10,000 operations (413), 3 MiB of copies (422), and no result nested past the body limit (422)', () => {
  const cm = (): ApiObject => ({ metadata: { name: 'c' }, data: { a: 'x'.repeat(100 * 1024) } });
  const code = (f: () => unknown): number | undefined => {
    try {
      f();
    } catch (e) {
      return e instanceof StatusError ? e.code : -1;
    }
    return undefined;
  };
  assert.equal(code(() => applyPatch('json', cm(), Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'c' })), 'ConfigMap')), 413);
  assert.equal(code(() => applyPatch('json', cm(), Array.from({ length: 10_000 }, () => ({ op: 'test', path: '/metadata/name', value: 'c' })), 'ConfigMap')), undefined);
  // 31 copies of 100 KiB pass 3 MiB; 30 do not.
  const copies = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` }));
  assert.equal(code(() => applyPatch('json', cm(), copies(31), 'ConfigMap')), 422);
  // Counted also when `from` names the value with a negative index.
  const listed: ApiObject = { metadata: { name: 'c', finalizers: ['x'.repeat(100 * 1024)] } };
  const fromEnd = Array.from({ length: 31 }, () => ({ op: 'copy', from: '/metadata/finalizers/-1', path: '/metadata/finalizers/0' }));
  assert.equal(code(() => applyPatch('json', listed, fromEnd, 'ConfigMap')), 422);
  assert.equal(Object.keys(applyPatch('json', cm(), copies(30), 'ConfigMap').data as object).length, 31);
  // Copying a 600-deep subtree under its own leaf makes it 1,200 deep.
  let extra: unknown = 1;
  for (let i = 0; i < 600; i++) extra = { a: extra };
  const deep: ApiObject = { metadata: { name: 'd' }, extra };
  assert.equal(code(() => applyPatch('json', deep, [{ op: 'copy', from: '/extra', path: `/extra${'/a'.repeat(599)}` }], 'ConfigMap')), 422);
});

// Linear, it takes a second or two; matched item by item (the old code) it ran past the test
// runner's 60 s limit for the file.
test('strategic merge patch is linear in list sizes: 100,000 merge-keyed items and deletions', () => {
  const n = 100_000;
  const env = Array.from({ length: n }, (_, i) => ({ name: `E${i}`, value: String(i) }));
  const pod: ApiObject = { metadata: { name: 'p', finalizers: env.map((e) => e.name) }, spec: { containers: [{ name: 'c', env }] } };
  const patch = {
    metadata: { '$deleteFromPrimitiveList/finalizers': env.map((e) => e.name).slice(1), finalizers: env.map((e) => `${e.name}-new`) },
    spec: { containers: [{ name: 'c', env: env.map((e, i) => (i % 2 ? { name: e.name, $patch: 'delete' } : { name: e.name, value: 'v' })), '$setElementOrder/env': [...env].reverse().map((e) => ({ name: e.name })) }] },
  };
  const out = strategicMergePatch(pod, patch, 'Pod') as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(out.metadata.finalizers.length, 1 + n);
  const merged = out.spec.containers[0].env;
  assert.equal(merged.length, n / 2);
  assert.deepEqual(merged[0], { name: `E${n - 2}`, value: 'v' });
});

test('JSON patch negative indices count from the end of the array (json-patch SupportNegativeIndices)', () => {
  const d = (): ApiObject => ({ metadata: { name: 'd', finalizers: ['a', 'b', 'c'] } });
  assert.deepEqual(applyPatch('json', d(), [{ op: 'remove', path: '/metadata/finalizers/-1' }], 'ConfigMap').metadata.finalizers, ['a', 'b']);
  assert.deepEqual(applyPatch('json', d(), [{ op: 'replace', path: '/metadata/finalizers/-3', value: 'z' }], 'ConfigMap').metadata.finalizers, ['z', 'b', 'c']);
  // An insertion counts from one past the end: -1 appends, -4 inserts first.
  assert.deepEqual(applyPatch('json', d(), [{ op: 'add', path: '/metadata/finalizers/-1', value: 'x' }], 'ConfigMap').metadata.finalizers, ['a', 'b', 'c', 'x']);
  assert.deepEqual(applyPatch('json', d(), [{ op: 'add', path: '/metadata/finalizers/-4', value: 'x' }], 'ConfigMap').metadata.finalizers, ['x', 'a', 'b', 'c']);
  assert.deepEqual(applyPatch('json', d(), [{ op: 'copy', from: '/metadata/finalizers/-1', path: '/metadata/finalizers/0' }], 'ConfigMap').metadata.finalizers, ['c', 'a', 'b', 'c']);
  // Out of range, and `-` (append) keeps its RFC 6902 meaning.
  assert.throws(() => applyPatch('json', d(), [{ op: 'remove', path: '/metadata/finalizers/-4' }], 'ConfigMap'), StatusError);
  assert.deepEqual(applyPatch('json', d(), [{ op: 'add', path: '/metadata/finalizers/-', value: 'x' }], 'ConfigMap').metadata.finalizers, ['a', 'b', 'c', 'x']);
});

test('JSON patch moves do not copy the document: 2,000 moves on an object of 20,000 keys', (t) => {
  const entries = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 'v'.repeat(40)]));
  const cm: ApiObject = { metadata: { name: 'm' }, data: { ...entries, b: 'y' } };
  const moves = Array.from({ length: 2_000 }, (_, i) => (i % 2 ? { op: 'move', from: '/data/c', path: '/data/b' } : { op: 'move', from: '/data/b', path: '/data/c' }));
  // fast-json-patch's own check of `from` encodes the whole document (1 MiB) per move.
  const stringify = t.mock.method(JSON, 'stringify');
  const out = applyPatch('json', cm, moves, 'ConfigMap');
  const encoded = stringify.mock.calls.reduce((n, c) => n + (typeof c.result === 'string' ? c.result.length : 0), 0);
  stringify.mock.restore();
  assert.ok(encoded < 1024 * 1024, `${encoded} bytes encoded for 2,000 moves`);
  assert.equal(Object.keys(out.data as object).length, 20_001);
  assert.throws(() => applyPatch('json', cm, [{ op: 'move', from: '/data/nope', path: '/data/c' }], 'ConfigMap'), (e: unknown) => e instanceof StatusError && e.code === 400);
  assert.throws(() => applyPatch('json', cm, [{ op: 'copy', path: '/data/c' }], 'ConfigMap'), (e: unknown) => e instanceof StatusError && e.code === 400);
});
