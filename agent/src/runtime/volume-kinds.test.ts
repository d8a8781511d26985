import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_SCHEMAS, type Volume } from '@nodelet/api';
import { REFUSED_VOLUME_SOURCES, VOLUME_KINDS, ephemeralPluginDirs, unsupportedVolumeProblems, volumeKindOf } from './volume-kinds.js';

/** The sources of a PodSpec volume, as the API's schema (and `kubectl explain pod.spec.volumes`) lists them. */
function schemaSources(): string[] {
  const volume = API_SCHEMAS['io.k8s.api.core.v1.Volume'];
  assert.ok(volume?.properties, 'the API describes core/v1 Volume');
  return Object.keys(volume.properties).filter((k) => k !== 'name');
}

test('every volume source of the PodSpec schema is either in the table of volume kinds or explicitly refused', () => {
  const supported = Object.keys(VOLUME_KINDS);
  const sources = schemaSources();
  const undecided = sources.filter((s) => !supported.includes(s) && !REFUSED_VOLUME_SOURCES.includes(s));
  assert.deepEqual(undecided, [], 'a new volume source: add it to VOLUME_KINDS or REFUSED_VOLUME_SOURCES (volume-kinds.ts)');
  assert.deepEqual(supported.filter((s) => REFUSED_VOLUME_SOURCES.includes(s)), [], 'a source is both supported and refused');
  assert.deepEqual([...supported, ...REFUSED_VOLUME_SOURCES].filter((s) => !sources.includes(s)), [], 'the table names a source the API does not have');
  assert.equal(new Set(REFUSED_VOLUME_SOURCES).size, REFUSED_VOLUME_SOURCES.length, 'a refused source is listed twice');
});

test('each refused source fails the pod with the FailedMount message, naming the volume and the source', () => {
  for (const source of REFUSED_VOLUME_SOURCES) {
    const v = { name: 'data', [source]: {} } as unknown as Volume;
    assert.equal(volumeKindOf(v), undefined, source);
    assert.deepEqual(unsupportedVolumeProblems([v]), [`volume "data": ${source} volumes are not supported on this node`], source);
  }
  // A source the API does not know and a volume without a source are refused too.
  assert.deepEqual(unsupportedVolumeProblems([{ name: 'x', madeUp: {} } as unknown as Volume, { name: 'y' } as Volume]), [
    'volume "x": madeUp volumes are not supported on this node',
    'volume "y" has no volume source',
  ]);
  assert.deepEqual(unsupportedVolumeProblems([{ name: 'ok', emptyDir: {} }, { name: 'h', hostPath: { path: '/tmp' } }]), []);
});

test('each supported kind lives in a plugin directory or names a node path, and says how containers see it', () => {
  for (const [source, kind] of Object.entries(VOLUME_KINDS)) {
    assert.ok((kind.pluginDir === undefined) !== (kind.nodePath === undefined), `${source}: exactly one of pluginDir and nodePath`);
  }
  const ro = (v: Volume) => volumeKindOf(v)!.readOnly(v);
  assert.equal(ro({ name: 'a', configMap: { name: 'c' } }), true);
  assert.equal(ro({ name: 'a', secret: { secretName: 's' } }), true);
  assert.equal(ro({ name: 'a', projected: { sources: [] } }), true);
  assert.equal(ro({ name: 'a', downwardAPI: {} }), true);
  assert.equal(ro({ name: 'a', emptyDir: {} }), false);
  assert.equal(ro({ name: 'a', hostPath: { path: '/x' } }), false);
  assert.equal(ro({ name: 'a', persistentVolumeClaim: { claimName: 'c' } }), false);
  assert.equal(ro({ name: 'a', persistentVolumeClaim: { claimName: 'c', readOnly: true } }), true);
  assert.equal(volumeKindOf({ name: 'h', hostPath: { path: '/srv' } })!.nodePath!({ name: 'h', hostPath: { path: '/srv' } }), '/srv');
  assert.deepEqual(Object.entries(VOLUME_KINDS).filter(([, k]) => k.fsGroup).map(([s]) => s), ['emptyDir', 'persistentVolumeClaim']);
  assert.deepEqual(ephemeralPluginDirs(), ['kubernetes.io~empty-dir', 'kubernetes.io~configmap', 'kubernetes.io~secret', 'kubernetes.io~projected', 'kubernetes.io~downward-api']);
});
