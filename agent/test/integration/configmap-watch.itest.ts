/**
 * The watch-based ConfigMap cache (configMapAndSecretChangeDetectionStrategy: Watch) with the real
 * API server, containerd and the in-process agent: a pod's ConfigMap volume and env come from one
 * single-object watch, an update reaches the mounted volume at a resync without any GET of the
 * ConfigMap, and the watch is closed once the pod is deleted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { CONFIGMAPS, PODS, type ConfigMap } from '@nodelet/api';
import { hostMounter, unmountAllUnder } from '../../src/runtime/mount.js';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

let h: Harness | undefined;
let skip = false;
let podsDir = '';

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  // syncFrequency: the resync that refreshes volumes (kubelet's default is 1 min).
  h = await startHarness('cmw', { syncFrequency: '2s' }, 57);
  podsDir = join(h.dir, 'root', 'pods');
  h.beforeRuntimeStop.push(() => unmountAllUnder(hostMounter, podsDir, AbortSignal.timeout(30_000)).then(() => undefined));
});
after(async () => {
  await h?.stop();
});

test('a ConfigMap update reaches a running pod through its watch, with no GET of it, and the watch closes with the pod', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const name = 'watched-cfg';
  // Without asNode the agent's client is the harness's admin client: count its GETs of the ConfigMap.
  const api = h!.api;
  const get = api.get.bind(api);
  let gets = 0;
  api.get = ((...args: Parameters<typeof get>) => {
    if (args[0] === CONFIGMAPS && args[1] === name) gets++;
    return get(...args);
  }) as typeof api.get;
  t.after(() => void (api.get = get));

  await api.create(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { mode: 'one' } } as ConfigMap);
  await api.create(PODS, podSpec(h!, 'cmw', {
    volumes: [{ name: 'cfg', configMap: { name } }],
    containers: [{
      name: 'c',
      image: h!.rt.images.busybox,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
      envFrom: [{ configMapRef: { name } }],
      volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
    }],
  }));
  const pod = await pollUntil('pod Running', async () => {
    const p = await getPod(h!, 'cmw');
    return p.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 60_000 });
  const file = join(podsDir, pod.metadata.uid!, 'volumes', 'kubernetes.io~configmap', 'cfg', 'mode');
  assert.equal(await readFile(file, 'utf8'), 'one');
  // kube-root-ca.crt: the kube-api-access volume the API server's admission adds.
  assert.deepEqual(h!.agent.sources?.watching(), ['configmap/default/kube-root-ca.crt', `configmap/default/${name}`]);

  await api.update(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { mode: 'two' } } as ConfigMap);
  await pollUntil('the update in the mounted volume', async () => (await readFile(file, 'utf8')) === 'two', { timeoutMs: 30_000 });
  assert.equal(gets, 0, 'the volume and env read the ConfigMap from its watch, never by GET');

  await api.delete(PODS, 'cmw', { namespace: 'default', gracePeriodSeconds: 1 });
  await pollUntil('the watch closed after the pod is gone', async () => {
    const gone = await getPod(h!, 'cmw').then(() => false, () => true);
    return gone && h!.agent.sources?.watching().length === 0;
  }, { timeoutMs: 60_000 });
  assert.equal(gets, 0);
});
