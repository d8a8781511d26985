import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '@nodelet/api';
import { newNodeInfo } from './node-info.js';
import { newPodContext } from './filters.js';
import { podVolumes, volumeBindingFilter, type VolumeLookup } from './volume-binding.js';
import { volumeMatchesClaim } from '../controllers/volume/binder.js';

const node = (name: string): Node => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name } }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } });
const claim = (name: string, spec: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {}): PersistentVolumeClaim => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'local-path', ...spec },
});
const pv = (name: string, onNode?: string, spec: Partial<NonNullable<PersistentVolume['spec']>> = {}): PersistentVolume => ({
  metadata: { name },
  spec: {
    capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'local-path', hostPath: { path: `/x/${name}` },
    ...(onNode ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [onNode] }] }] } } } : {}),
    ...spec,
  },
  status: { phase: 'Available' },
});
const classes: Record<string, StorageClass> = {
  'local-path': { metadata: { name: 'local-path' }, provisioner: 'nodelet.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' },
  fast: { metadata: { name: 'fast' }, provisioner: 'x', volumeBindingMode: 'Immediate' },
};
function lookup(claims: PersistentVolumeClaim[], volumes: PersistentVolume[]): VolumeLookup {
  return {
    claim: (ns, n) => claims.find((c) => c.metadata.namespace === ns && c.metadata.name === n),
    volume: (n) => volumes.find((v) => v.metadata.name === n),
    storageClass: (n) => classes[n],
  };
}
const pod = (...claims: string[]): Pod => ({ metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'c' }], volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) } });

test('VolumeBinding: bound claims pin the pod to the volume node; missing and unbound Immediate claims fit nowhere', () => {
  const l = lookup([claim('bound', { volumeName: 'pv-a' }), claim('waiting'), claim('immediate', { storageClassName: 'fast' })], [pv('pv-a', 'a')]);
  const f = volumeBindingFilter(l);
  const run = (p: Pod, n: string): string | undefined => f.filter(newPodContext(p), newNodeInfo(node(n), []))?.reasons[0];
  assert.equal(run(pod('bound'), 'a'), undefined);
  assert.equal(run(pod('bound'), 'b'), "node(s) had volume node affinity conflict");
  assert.equal(run(pod('waiting'), 'b'), undefined, 'WaitForFirstConsumer: any node, provisioned there later');
  assert.deepEqual(podVolumes(pod('waiting', 'bound'), l).delayed.map((c) => c.metadata.name), ['waiting']);
  assert.equal(run(pod('nope'), 'a'), 'persistentvolumeclaim "nope" not found');
  assert.equal(run(pod('immediate'), 'a'), 'pod has unbound immediate PersistentVolumeClaims');
  assert.equal(run({ metadata: { name: 'q', namespace: 'ns' }, spec: { containers: [] } }, 'a'), undefined);
});

test('binder: a static PV serves a claim of its class, modes and size, on the selected node', () => {
  const c = claim('c');
  assert.equal(volumeMatchesClaim(pv('ok'), c), true);
  assert.equal(volumeMatchesClaim(pv('small', undefined, { capacity: { storage: '512Mi' } }), c), false);
  assert.equal(volumeMatchesClaim(pv('rox', undefined, { accessModes: ['ReadOnlyMany'] }), c), false);
  assert.equal(volumeMatchesClaim(pv('other-class', undefined, { storageClassName: 'fast' }), c), false);
  assert.equal(volumeMatchesClaim(pv('taken', undefined, { claimRef: { name: 'x', namespace: 'ns' } }), c), false);
  assert.equal(volumeMatchesClaim(pv('on-a', 'a'), c, node('a')), true);
  assert.equal(volumeMatchesClaim(pv('on-a', 'a'), c, node('b')), false);
});
