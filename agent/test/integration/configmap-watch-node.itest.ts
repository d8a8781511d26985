/**
 * The watch-based ConfigMap cache as a joined node (its own node credential, so every list/watch
 * of a ConfigMap passes the Node authorizer): the pod starts with its ConfigMap read from a
 * single-object watch, and an update reaches the mounted volume through it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { CONFIGMAPS, PODS, type ConfigMap } from '@nodelet/api';
import { hostMounter, unmountAllUnder } from '../../src/runtime/mount.js';
import { skipUnlessRoot, startHarness, podSpec, getPod } from './harness.js';

test('as a node: a ConfigMap volume comes from a single-object watch the Node authorizer allows, and follows updates', { timeout: 180_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  // No serving-certificate approver: this test never dials the agent.
  const h = await startHarness('cmwn', { syncFrequency: '2s' }, 58, { asNode: { controllers: ['csrsigning'] } });
  t.after(() => h.stop());
  const podsDir = join(h.dir, 'root', 'pods');
  h.beforeRuntimeStop.push(() => unmountAllUnder(hostMounter, podsDir, AbortSignal.timeout(30_000)).then(() => undefined));
  const name = 'node-cfg';
  await h.api.create(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { mode: 'one' } } as ConfigMap);
  await h.api.create(PODS, podSpec(h, 'cmwn', {
    volumes: [{ name: 'cfg', configMap: { name } }],
    containers: [{
      name: 'c',
      image: h.rt.images.busybox,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
    }],
  }));
  const pod = await pollUntil('pod Running', async () => {
    const p = await getPod(h, 'cmwn');
    return p.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 60_000 });
  // Only the watch serves reads: a refused list would have failed the volume ("failed to sync").
  assert.deepEqual(h.agent.sources?.watching(), ['configmap/default/kube-root-ca.crt', `configmap/default/${name}`]);
  const file = join(podsDir, pod.metadata.uid!, 'volumes', 'kubernetes.io~configmap', 'cfg', 'mode');
  assert.equal(await readFile(file, 'utf8'), 'one');
  await h.api.update(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { mode: 'two' } } as ConfigMap);
  await pollUntil('the update in the mounted volume', async () => (await readFile(file, 'utf8')) === 'two', { timeoutMs: 30_000 });
});
