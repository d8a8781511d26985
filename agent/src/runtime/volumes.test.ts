import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentError, hasCode } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import type { Mounter } from './mount.js';
import { cleanupOrphanedPodDirs, podPathProblems, preparePodVolumes, removePodDir, type VolumeSourceReader } from './volumes.js';

const UID = '0b5a3c4e-1111-4222-8333-944455556666';
const signal = AbortSignal.timeout(10_000);

/** Records mounts instead of making them; "mounted" paths answer isTmpfsMountPoint/mountPointsUnder. */
function fakeMounter(): Mounter & { mounted: Set<string>; calls: string[] } {
  const mounted = new Set<string>();
  const calls: string[] = [];
  return {
    mounted,
    calls,
    mountTmpfs: async (target, options) => {
      calls.push(`tmpfs ${target} ${options.join(',')}`);
      mounted.add(target);
    },
    bindMount: async () => assert.fail('no bind mounts here'),
    unmount: async (target) => {
      calls.push(`umount ${target}`);
      mounted.delete(target);
    },
    mountPointsUnder: async (dir) => [...mounted].filter((m) => m === dir || m.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length),
    isTmpfsMountPoint: async (dir) => mounted.has(dir),
  };
}

function reader(secrets: Record<string, Record<string, string>>, configMaps: Record<string, Record<string, string>> = {}): VolumeSourceReader {
  const bytes = (d?: Record<string, string>) => d && Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v)]));
  return { secret: async (_ns, name) => bytes(secrets[name]), configMap: async (_ns, name) => bytes(configMaps[name]) };
}

function pod(spec: Partial<NonNullable<Pod['spec']>>, uid = UID): Pod {
  return { metadata: { name: 'p', namespace: 'default', uid }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

async function rootDir(t: { after(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-volumes-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a configMap volume named ../../../../etc/cron.d writes nothing anywhere (it wrote host files before)', async (t) => {
  const root = await rootDir(t);
  const sink = join(root, 'pods', UID, 'volumes', 'kubernetes.io~configmap', '../../../../etc/cron.d');
  const m = fakeMounter();
  const p = pod({ volumes: [{ name: '../../../../etc/cron.d', configMap: { name: 'cron' } }] });
  assert.match(podPathProblems(p).join('\n'), /^spec\.volumes\[0\]\.name: Invalid value: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/cron\.d": a lowercase RFC 1123 label/);
  await assert.rejects(
    preparePodVolumes(p, { rootDir: root, reader: reader({}, { cron: { evil: '* * * * * root sh -c id' } }), mounter: m }, signal),
    (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /invalid pod spec: spec\.volumes\[0\]\.name/.test((e as Error).message),
  );
  await assert.rejects(stat(join(sink, 'evil')), /ENOENT/);
  assert.deepEqual(await readdir(root), [], 'no directory was created at all');
  for (const bad of [pod({}, '../../x'), pod({ containers: [{ name: '../c', image: 'x' }] }), pod({ volumes: [{ name: 'v', emptyDir: {} }], containers: [{ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: '../..' }] }] })]) {
    assert.equal(podPathProblems(bad).length, 1, JSON.stringify(bad));
  }
});

test('secret volumes: a tmpfs first, then the atomic layout with defaultMode/item modes; removed keys disappear', async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  const secrets: Record<string, Record<string, string>> = { s: { a: 'A', b: 'B' } };
  const ctx = { rootDir: root, reader: reader(secrets), mounter: m };
  const p = pod({ volumes: [{ name: 'sec', secret: { secretName: 's' } }, { name: 'ro', secret: { secretName: 's', defaultMode: 0o400, items: [{ key: 'a', path: 'dir/a', mode: 0o440 }, { key: 'b', path: 'b' }] } }] });
  const old = process.umask(0o077);
  try {
    await preparePodVolumes(p, ctx, signal);
  } finally {
    process.umask(old);
  }
  const sec = join(root, 'pods', UID, 'volumes', 'kubernetes.io~secret', 'sec');
  const ro = join(root, 'pods', UID, 'volumes', 'kubernetes.io~secret', 'ro');
  // A pod's volumes are prepared at once, so the two mounts may come in either order.
  assert.deepEqual([...m.calls].sort(), [`tmpfs ${ro} mode=0755,nosuid,nodev`, `tmpfs ${sec} mode=0755,nosuid,nodev`]);
  assert.equal((await stat(join(sec, 'a'))).mode & 0o777, 0o644, 'defaultMode defaults to 0644 whatever the umask');
  assert.equal((await stat(join(ro, 'b'))).mode & 0o777, 0o400);
  assert.equal((await stat(join(ro, 'dir/a'))).mode & 0o777, 0o440);
  assert.equal(await readlink(join(sec, 'a')), '..data/a');
  secrets.s = { a: 'A2' };
  await assert.rejects(preparePodVolumes(p, ctx, signal), /references non-existent secret key: b/, 'an item naming a removed key fails');
  await preparePodVolumes(pod({ volumes: [{ name: 'sec', secret: { secretName: 's' } }] }), ctx, signal);
  assert.equal(await readFile(join(sec, 'a'), 'utf8'), 'A2');
  assert.deepEqual((await readdir(sec)).filter((n) => !n.startsWith('..')), ['a'], 'b is gone');
  assert.equal(m.calls.length, 2, 'already-mounted tmpfs is not mounted again');
  await removePodDir(root, UID, m, signal);
  assert.deepEqual(m.mounted, new Set(), 'unmounted');
  assert.deepEqual(await readdir(join(root, 'pods')), []);
});

test('missing sources: non-optional fails, optional gives an empty volume; emptyDir is 0777 whatever the umask', async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  const ctx = { rootDir: root, reader: reader({}), mounter: m };
  await assert.rejects(preparePodVolumes(pod({ volumes: [{ name: 'c', configMap: { name: 'nope' } }] }), ctx, signal), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION') && /configmap "nope" not found/.test((e as Error).message));
  const old = process.umask(0o077);
  try {
    await preparePodVolumes(pod({ volumes: [{ name: 'c', configMap: { name: 'nope', optional: true } }, { name: 'e', emptyDir: {} }, { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }] }), ctx, signal);
  } finally {
    process.umask(old);
  }
  const vols = join(root, 'pods', UID, 'volumes');
  assert.deepEqual(await readdir(join(vols, 'kubernetes.io~configmap', 'c')), ['..data', await readlink(join(vols, 'kubernetes.io~configmap', 'c', '..data'))].sort());
  assert.equal((await stat(join(vols, 'kubernetes.io~empty-dir', 'e'))).mode & 0o777, 0o777);
  assert.deepEqual(m.calls, [`tmpfs ${join(vols, 'kubernetes.io~empty-dir', 'mem')} mode=0777,size=1048576,nosuid,nodev`]);
});

test('orphaned pod directories are unmounted and removed; wanted ones and non-UID entries stay', async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  const orphan = '11111111-2222-4333-8444-555555555555';
  for (const uid of [UID, orphan]) await mkdir(join(root, 'pods', uid, 'volumes', 'kubernetes.io~secret', 's'), { recursive: true });
  await mkdir(join(root, 'pods', 'not a uid'), { recursive: true });
  m.mounted.add(join(root, 'pods', orphan, 'volumes', 'kubernetes.io~secret', 's'));
  m.mounted.add(join(root, 'pods', orphan, 'volume-subpaths', 'v', 'c', '0'));
  assert.deepEqual(await cleanupOrphanedPodDirs(root, (uid) => uid === UID, m, signal), [orphan]);
  assert.deepEqual((await readdir(join(root, 'pods'))).sort(), [UID, 'not a uid'].sort());
  assert.deepEqual(m.mounted, new Set());
  assert.deepEqual(m.calls.map((c) => c.split(' ')[0]), ['umount', 'umount']);
  // A mount that will not go away keeps the directory: rm must never reach through it.
  const stuck = fakeMounter();
  stuck.mounted.add(join(root, 'pods', UID, 'volumes', 'kubernetes.io~secret', 's'));
  stuck.unmount = async () => undefined;
  await assert.rejects(cleanupOrphanedPodDirs(root, () => false, stuck, signal), /still mounted/);
  assert.ok((await readdir(join(root, 'pods'))).includes(UID));
});

test('a persistentVolumeClaim volume: the PV directory is created (DirectoryOrCreate) and bind-mounted once; an unbound claim waits', async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  const binds: string[] = [];
  m.bindMount = async (source, target) => {
    binds.push(`${source} -> ${target}`);
    m.mounted.add(target);
  };
  const pvDir = join(root, 'local-path', 'pvc-1');
  let bound = false;
  const r: VolumeSourceReader = {
    ...reader({}),
    claimVolume: async (ns, claim) => {
      assert.deepEqual([ns, claim], ['default', 'www-web-0']);
      if (!bound) throw new AgentError('ERR_FAILED_PRECONDITION', 'persistentvolumeclaim "www-web-0" is not bound');
      return { path: pvDir, create: true };
    },
  };
  const p = pod({ volumes: [{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-0' } }] });
  await assert.rejects(preparePodVolumes(p, { rootDir: root, reader: r, mounter: m }, signal), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION'));
  bound = true;
  await preparePodVolumes(p, { rootDir: root, reader: r, mounter: m }, signal);
  await preparePodVolumes(p, { rootDir: root, reader: r, mounter: m }, signal);
  const target = join(root, 'pods', UID, 'volumes', 'kubernetes.io~local-volume', 'www');
  assert.deepEqual(binds, [`${pvDir} -> ${target}`]);
  assert.equal((await stat(pvDir)).mode & 0o777, 0o755);
  await removePodDir(root, UID, m, signal);
  assert.ok(m.calls.includes(`umount ${target}`), 'unmounted before the pod directory goes');
  assert.ok((await stat(pvDir)).isDirectory(), 'the data outlives the pod');
  const traversal: VolumeSourceReader = { ...r, claimVolume: async () => ({ path: '/var/../etc', create: true }) };
  await assert.rejects(preparePodVolumes(pod({ volumes: [{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-0' } }] }, '1b5a3c4e-1111-4222-8333-944455556666'), { rootDir: root, reader: traversal, mounter: m }, signal), /not an absolute path without/);
});

test('a kube-api-access volume asks for its token and reads its CA ConfigMap at once, while its tmpfs is mounted; a later source still wins a path clash', { timeout: 5000 }, async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  const started: string[] = [];
  // Each read only answers once all three steps have begun: done one after another, they would never finish.
  let go!: () => void;
  const allStarted = new Promise<void>((r) => (go = r));
  const begin = async (what: string): Promise<void> => {
    started.push(what);
    if (started.length === 3) go();
    await allStarted;
  };
  const mounter: Mounter = { ...m, mountTmpfs: async (target, options) => { await begin('mount'); await m.mountTmpfs(target, options, signal); } };
  const volumeReader: VolumeSourceReader = {
    secret: async () => assert.fail('no secrets here'),
    configMap: async () => { await begin('configmap'); return { 'ca.crt': Buffer.from('CA'), token: Buffer.from('from the configmap') }; },
  };
  const tokens = { podToken: async () => { await begin('token'); return 'jwt'; }, forget: () => {} };
  const p = pod({
    volumes: [{
      name: 'kube-api-access-abcde',
      projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }, { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] },
    }],
  });
  await preparePodVolumes(p, { rootDir: root, reader: volumeReader, mounter, tokens }, AbortSignal.timeout(5000));
  assert.deepEqual([...started].sort(), ['configmap', 'mount', 'token']);
  const dir = join(root, 'pods', UID, 'volumes', 'kubernetes.io~projected', 'kube-api-access-abcde');
  assert.equal(await readFile(join(dir, 'ca.crt'), 'utf8'), 'CA');
  assert.equal(await readFile(join(dir, 'token'), 'utf8'), 'jwt', 'the token source comes after the ConfigMap and wins');
});

test('volumes of one pod are prepared at once; the first failing volume in spec order is the error, after every volume has finished', async (t) => {
  const root = await rootDir(t);
  const m = fakeMounter();
  let secondDone = false;
  const volumeReader: VolumeSourceReader = {
    secret: async () => undefined,
    configMap: async (_ns, name) => {
      if (name === 'slow') {
        await new Promise((r) => setTimeout(r, 20));
        secondDone = true;
        return { k: Buffer.from('v') };
      }
      return undefined;
    },
  };
  const p = pod({ volumes: [{ name: 'missing', secret: { secretName: 'nope' } }, { name: 'slow', configMap: { name: 'slow' } }, { name: 'also-missing', configMap: { name: 'gone' } }] });
  await assert.rejects(preparePodVolumes(p, { rootDir: root, reader: volumeReader, mounter: m }, signal), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION') && /secret "nope" not found/.test((e as Error).message));
  assert.equal(secondDone, true, 'nothing is left running behind the error');
  assert.equal(await readFile(join(root, 'pods', UID, 'volumes', 'kubernetes.io~configmap', 'slow', 'k'), 'utf8'), 'v');
});
