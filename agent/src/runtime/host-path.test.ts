import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@nodelet/base';
import type { Pod, Volume } from '@nodelet/api';
import type { Mounter } from './mount.js';
import { preparePodVolumes } from './volumes.js';
import { unsupportedVolumeProblems } from './volume-kinds.js';

const UID = '0b5a3c4e-1111-4222-8333-944455556666';
const signal = AbortSignal.timeout(10_000);
const noMounts: Mounter = {
  mountTmpfs: async () => assert.fail('no tmpfs expected'),
  bindMount: async () => assert.fail('no bind mount expected'),
  unmount: async () => undefined,
  mountPointsUnder: async () => [],
  isTmpfsMountPoint: async () => false,
};
const none = { secret: async () => undefined, configMap: async () => undefined };

async function tmp(t: { after(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-hostpath-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function prepare(root: string, volumes: Volume[]): Promise<void> {
  const pod: Pod = { metadata: { name: 'p', namespace: 'default', uid: UID }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes } };
  return preparePodVolumes(pod, { rootDir: root, reader: none, mounter: noMounts }, signal);
}

const failsWith = (re: RegExp) => (e: unknown) => hasCode(e, 'ERR_FAILED_PRECONDITION') && re.test((e as Error).message);

test('hostPath DirectoryOrCreate creates a 0755 directory; Directory requires one', async (t) => {
  const root = await tmp(t);
  const dir = join(root, 'host', 'a', 'b');
  await prepare(root, [{ name: 'd', hostPath: { path: dir, type: 'DirectoryOrCreate' } }]);
  const st = await stat(dir);
  assert.ok(st.isDirectory());
  assert.equal(st.mode & 0o777, 0o755);
  await prepare(root, [{ name: 'd', hostPath: { path: dir, type: 'Directory' } }]);
  const missing = join(root, 'nope');
  await assert.rejects(prepare(root, [{ name: 'd', hostPath: { path: missing, type: 'Directory' } }]), failsWith(new RegExp(`^MountVolume.SetUp failed for volume "d" : hostPath type check failed: ${missing} is not a directory$`)));
  await assert.rejects(stat(missing), /ENOENT/, 'Directory never creates');
  const file = join(root, 'f');
  await writeFile(file, 'x');
  await assert.rejects(prepare(root, [{ name: 'd', hostPath: { path: file, type: 'DirectoryOrCreate' } }]), failsWith(/is not a directory$/));
});

test('hostPath FileOrCreate creates an empty 0644 file (not a directory); File requires a regular file', async (t) => {
  const root = await tmp(t);
  const file = join(root, 'lock');
  await prepare(root, [{ name: 'f', hostPath: { path: file, type: 'FileOrCreate' } }]);
  const st = await stat(file);
  assert.ok(st.isFile(), 'a file, not a directory');
  assert.equal(st.size, 0);
  assert.equal(st.mode & 0o777, 0o644 & ~process.umask());
  await prepare(root, [{ name: 'f', hostPath: { path: file, type: 'File' } }]);
  await assert.rejects(prepare(root, [{ name: 'f', hostPath: { path: root, type: 'File' } }]), failsWith(new RegExp(`hostPath type check failed: ${root} is not a file$`)));
  await assert.rejects(prepare(root, [{ name: 'f', hostPath: { path: join(root, 'no', 'parent'), type: 'FileOrCreate' } }]), failsWith(/no such file or directory/));
});

test('hostPath Socket, CharDevice and BlockDevice are checked with kubelet\'s messages', async (t) => {
  const root = await tmp(t);
  const sock = join(root, 's.sock');
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(sock, r));
  t.after(() => srv.close());
  await prepare(root, [{ name: 's', hostPath: { path: sock, type: 'Socket' } }]);
  await assert.rejects(prepare(root, [{ name: 's', hostPath: { path: root, type: 'Socket' } }]), failsWith(/is not a socket file$/));
  await prepare(root, [{ name: 'c', hostPath: { path: '/dev/null', type: 'CharDevice' } }]);
  await assert.rejects(prepare(root, [{ name: 'c', hostPath: { path: root, type: 'CharDevice' } }]), failsWith(/is not a character device$/));
  await assert.rejects(prepare(root, [{ name: 'b', hostPath: { path: '/dev/null', type: 'BlockDevice' } }]), failsWith(/hostPath type check failed: \/dev\/null is not a block device$/));
  await prepare(root, [{ name: 'u', hostPath: { path: join(root, 'untyped-missing') } }]);
});

test('volume sources the node cannot provide fail the pod with a clear message, before anything is created', async (t) => {
  const root = await tmp(t);
  const csi = { name: 'data', csi: { driver: 'x.example.com' } } as unknown as Volume;
  const nfs = { name: 'share', nfs: { server: '10.0.0.1', path: '/' } } as unknown as Volume;
  assert.deepEqual(unsupportedVolumeProblems([csi, { name: 'ok', emptyDir: {} }, nfs, { name: 'bare' } as Volume]), [
    'volume "data": csi volumes are not supported on this node',
    'volume "share": nfs volumes are not supported on this node',
    'volume "bare" has no volume source',
  ]);
  await mkdir(join(root, 'pods'), { recursive: true });
  await assert.rejects(prepare(root, [{ name: 'ok', emptyDir: {} }, csi]), failsWith(/^volume "data": csi volumes are not supported on this node$/));
  await assert.rejects(stat(join(root, 'pods', UID)), /ENOENT/, 'no pod directory, not even for the emptyDir');
});
