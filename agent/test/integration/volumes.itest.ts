/**
 * Volume paths with the real API server, containerd and the in-process agent: a volume named
 * `../x` is 422, a subPath symlink planted in a shared emptyDir cannot reach the node's root,
 * secret volumes live on tmpfs with modes independent of the agent's umask and follow key
 * removals, and no mount outlives its pod (nor an orphaned pod directory).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode, pollUntil } from '@nodelet/base';
import { PODS, SECRETS, statusOf, type Secret } from '@nodelet/api';
import { hostMounter, parseMountPoints, unmountAllUnder } from '../../src/runtime/mount.js';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

let h: Harness | undefined;
let skip = false;
let podsDir = '';

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  h = await startHarness('vol', {}, 5);
  podsDir = join(h.dir, 'root', 'pods');
  // Whatever a failed test left mounted goes before the harness removes its directory.
  h.beforeRuntimeStop.push(() => unmountAllUnder(hostMounter, podsDir, AbortSignal.timeout(30_000)).then(() => undefined));
});
after(async () => {
  await h?.stop();
});

const mountsUnder = async (dir: string): Promise<string[]> => parseMountPoints(await readFile('/proc/self/mountinfo', 'utf8'), dir);

async function exec(containerId: string, cmd: string[]): Promise<string> {
  const r = await h!.agent.cri.runtime.execSync({ containerId, cmd, timeout: 10 });
  assert.equal(r.exitCode, 0, `exec ${cmd.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function containerId(pod: string, name: string): Promise<string> {
  const p = await getPod(h!, pod);
  const id = p.status?.containerStatuses?.find((c) => c.name === name)?.containerID;
  assert.ok(id, `container ${name} of ${pod} has an ID`);
  return id.replace('containerd://', '');
}

async function deleteAndWaitGone(name: string, uid: string): Promise<void> {
  await h!.api.delete(PODS, name, { namespace: 'default', gracePeriodSeconds: 1 });
  await pollUntil(`pod ${name} gone with its directory and mounts`, async () => {
    const gone = await getPod(h!, name).then(() => false, () => true);
    return gone && !existsSync(join(podsDir, uid)) && (await mountsUnder(join(podsDir, uid))).length === 0;
  }, { timeoutMs: 60_000 });
}

test('a pod with a volume named ../x is refused by the API server with 422 Invalid', async (t) => {
  if (skip) return t.skip('needs root');
  const err = await h!.api.create(PODS, podSpec(h!, 'dotdot', {
    volumes: [{ name: '../x', emptyDir: {} }],
    containers: [{ name: 'c', image: h!.rt.images.busybox, volumeMounts: [{ name: '../x', mountPath: '/x' }] }],
  })).then(() => assert.fail('created'), (e: unknown) => e);
  assert.ok(hasCode(err, 'ERR_INVALID_ARGUMENT'), String(err));
  const st = statusOf(err)!;
  assert.equal(st.code, 422);
  assert.equal(st.reason, 'Invalid');
  const fields = (st.details?.causes ?? []).map((c) => c.field);
  assert.deepEqual(fields, ['spec.volumes[0].name', 'spec.containers[0].volumeMounts[0].name']);
  assert.match(st.message ?? '', /spec\.volumes\[0\]\.name: Invalid value: "\.\.\/x": a lowercase RFC 1123 label/);
});

test('a subPath symlink planted in a shared emptyDir cannot expose the node: the container never starts and says why', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const img = h!.rt.images.busybox;
  const sleep = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'];
  await h!.api.create(PODS, podSpec(h!, 'escape', {
    volumes: [{ name: 'data', emptyDir: {} }],
    initContainers: [{
      name: 'plant',
      image: img,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'ln -s / /data/escape && ln -s .. /data/up && mkdir /data/ok && echo inside > /data/ok/f && ln -s ok /data/inside'],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    }],
    containers: [
      { name: 'app', image: img, imagePullPolicy: 'IfNotPresent', command: sleep, volumeMounts: [{ name: 'data', mountPath: '/host', subPath: 'escape' }] },
      { name: 'up', image: img, imagePullPolicy: 'IfNotPresent', command: sleep, volumeMounts: [{ name: 'data', mountPath: '/host', subPath: 'up' }] },
      { name: 'good', image: img, imagePullPolicy: 'IfNotPresent', command: sleep, volumeMounts: [{ name: 'data', mountPath: '/mnt', subPath: 'inside' }] },
    ],
  }));
  const pod = await pollUntil('good running, app and up in CreateContainerConfigError', async () => {
    const p = await getPod(h!, 'escape');
    const by = (n: string) => p.status?.containerStatuses?.find((c) => c.name === n)?.state;
    return by('good')?.running && by('app')?.waiting?.reason === 'CreateContainerConfigError' && by('up')?.waiting?.reason === 'CreateContainerConfigError' ? p : undefined;
  }, { timeoutMs: 90_000 });
  const uid = pod.metadata.uid!;
  const statusOfC = (n: string) => pod.status!.containerStatuses!.find((c) => c.name === n)!.state!.waiting!.message;
  assert.equal(statusOfC('app'), 'failed to prepare subPath for volumeMount "data" of container "app": subPath "escape" escapes the volume "data"');
  assert.equal(statusOfC('up'), 'failed to prepare subPath for volumeMount "data" of container "up": subPath "up" escapes the volume "data"');
  const failed = h!.agent.events.recent.filter((e) => e.pod === 'default/escape' && e.reason === 'Failed' && e.type === 'Warning').map((e) => e.message);
  assert.ok(failed.includes('Error: failed to prepare subPath for volumeMount "data" of container "app": subPath "escape" escapes the volume "data"'), failed.join('\n'));

  // Nothing of the node's root reached a container: app and up were never created, and the only
  // subPath mount is good's, of the directory inside the volume.
  const created = await h!.agent.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } });
  assert.deepEqual(created.containers.map((c) => c.metadata?.name).sort(), ['good', 'plant']);
  assert.deepEqual(await mountsUnder(join(podsDir, uid, 'volume-subpaths')), [join(podsDir, uid, 'volume-subpaths', 'data', 'good', '0')]);
  const good = await containerId('escape', 'good');
  assert.equal((await exec(good, ['cat', '/mnt/f'])).trim(), 'inside');
  // It stays refused on later syncs (the symlink is still there).
  await pollUntil('a later sync refused app again', () => h!.agent.events.recent.filter((e) => e.pod === 'default/escape' && e.reason === 'Failed').length >= 4, { timeoutMs: 30_000 });
  assert.equal((await h!.agent.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } })).containers.length, 2);

  await deleteAndWaitGone('escape', uid);
});

test('secret volumes are on tmpfs, 0644 by default and 0400 with defaultMode whatever the agent umask, and follow key removals', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  // The agent runs in this process: a restrictive umask here is the agent's umask.
  const oldMask = process.umask(0o077);
  t.after(() => process.umask(oldMask));
  const img = h!.rt.images.busybox;
  await h!.api.create(SECRETS, { metadata: { name: 'creds', namespace: 'default' }, stringData: { user: 'admin', pass: 's3cret' } } as Secret);
  await h!.api.create(PODS, podSpec(h!, 'secret', {
    volumes: [{ name: 's1', secret: { secretName: 'creds' } }, { name: 's2', secret: { secretName: 'creds', defaultMode: 0o400 } }],
    containers: [{
      name: 'c',
      image: img,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
      volumeMounts: [{ name: 's1', mountPath: '/etc/s1' }, { name: 's2', mountPath: '/etc/s2', readOnly: false }],
    }],
  }));
  const pod = await pollUntil('secret pod Running', async () => {
    const p = await getPod(h!, 'secret');
    return p.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 60_000 });
  const uid = pod.metadata.uid!;
  const secretDirs = ['s1', 's2'].map((v) => join(podsDir, uid, 'volumes', 'kubernetes.io~secret', v));

  // On the node: each secret volume is its own tmpfs (nothing on the node's disk).
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  for (const d of secretDirs) {
    const line = info.split('\n').find((l) => l.split(' ')[4] === d);
    assert.ok(line, `${d} is a mount point`);
    assert.match(line, / - tmpfs /, line);
  }
  // In the container: tmpfs, read-only even where the pod asked for readOnly: false, exact modes.
  const id = await containerId('secret', 'c');
  const inside = await exec(id, ['cat', '/proc/self/mountinfo']);
  for (const m of ['/etc/s1', '/etc/s2']) {
    const line = inside.split('\n').find((l) => l.split(' ')[4] === m);
    assert.ok(line && / - tmpfs /.test(line), `${m}: ${line}`);
    assert.match(line.split(' ')[5]!, /^ro\b/, `${m} is mounted read-only: ${line}`);
  }
  assert.equal((await exec(id, ['stat', '-L', '-c', '%a %n', '/etc/s1/user', '/etc/s1/pass', '/etc/s2/user'])).trim(), '644 /etc/s1/user\n644 /etc/s1/pass\n400 /etc/s2/user');
  assert.equal((await exec(id, ['cat', '/etc/s1/user'])).trim(), 'admin');
  assert.match((await exec(id, ['readlink', '/etc/s1/..data'])).trim(), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./);
  assert.equal((await exec(id, ['readlink', '/etc/s1/user'])).trim(), '..data/user');

  // A key removed from the Secret disappears at the next resync; the changed one is updated.
  const s = await h!.api.get(SECRETS, 'creds', { namespace: 'default' });
  await h!.api.update(SECRETS, { ...s, data: { user: Buffer.from('admin2').toString('base64') } });
  await pollUntil('pass removed and user updated in the container', async () => {
    const names = (await exec(id, ['ls', '/etc/s1'])).split('\n').filter(Boolean).sort();
    const user = (await exec(id, ['cat', '/etc/s1/user'])).trim();
    return names.join(',') === 'user' && user === 'admin2';
  }, { timeoutMs: 45_000, intervalMs: 500 });
  assert.equal((await exec(id, ['stat', '-L', '-c', '%a', '/etc/s2/user'])).trim(), '400', 'modes kept across the update');

  await deleteAndWaitGone('secret', uid);
  assert.deepEqual(await mountsUnder(podsDir), [], 'no mount left under the pods directory');
});

test('an orphaned pod directory (agent crash, pod removed meanwhile) is unmounted and removed by housekeeping', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const uid = '0d1e2f30-4152-4637-8899-aabbccddeeff';
  const secret = join(podsDir, uid, 'volumes', 'kubernetes.io~secret', 'left');
  const subpath = join(podsDir, uid, 'volume-subpaths', 'data', 'c', '0');
  const data = join(podsDir, uid, 'volumes', 'kubernetes.io~empty-dir', 'data', 'sub');
  for (const d of [secret, subpath, data]) await mkdir(d, { recursive: true });
  const signal = AbortSignal.timeout(10_000);
  await hostMounter.mountTmpfs(secret, ['mode=0755'], signal);
  await hostMounter.bindMount(data, subpath, signal);
  assert.equal((await mountsUnder(join(podsDir, uid))).length, 2);
  await pollUntil('orphaned pod directory removed', async () => !existsSync(join(podsDir, uid)) && (await mountsUnder(join(podsDir, uid))).length === 0, { timeoutMs: 30_000 });
});
