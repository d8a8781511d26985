import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil, systemClock } from '@nodelet/base';
import { CONFIGMAPS, SECRETS, type ApiClient, type Pod } from '@nodelet/api/agent';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { podConfigSources } from '@nodelet/api';
import { NOT_WATCHED, sourceReader, WatchedObjects } from './watched-objects.js';

const pod = (uid: string, configMaps: string[], secrets: string[] = []): Pod => ({
  metadata: { name: `p-${uid}`, namespace: 'ns', uid },
  spec: {
    containers: [{ name: 'c', image: 'x', envFrom: secrets.map((name) => ({ secretRef: { name } })) }],
    volumes: configMaps.map((name, i) => ({ name: `v${i}`, configMap: { name } })),
  },
});

/** The server's client with its GETs counted. */
function countingClient(server: InMemoryApiServer): { api: ApiClient; gets: () => number } {
  const api = server.client();
  const get = api.get.bind(api);
  let n = 0;
  api.get = ((...args: Parameters<typeof get>) => (n++, get(...args))) as typeof api.get;
  return { api, gets: () => n };
}

test('a watch per referenced object, shared by the pods that reference it, closed with the last of them', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const watched = new WatchedObjects({ api: server.client(), clock: systemClock, log: noopLogger });
  t.after(() => watched.close());

  watched.register(pod('a', ['shared', 'only-a'], ['pw']));
  watched.register(pod('b', ['shared']));
  assert.deepEqual(watched.watching(), ['configmap/ns/only-a', 'configmap/ns/shared', 'secret/ns/pw']);
  await pollUntil('three watches open', () => server.watchCount === 3, { timeoutMs: 5000 });

  watched.register(pod('a', ['shared', 'only-a'], ['pw']));
  assert.deepEqual(watched.watching(), ['configmap/ns/only-a', 'configmap/ns/shared', 'secret/ns/pw'], 'registering again (every sync) changes nothing');

  watched.register(pod('a', ['shared', 'new-a']));
  assert.deepEqual(watched.watching(), ['configmap/ns/new-a', 'configmap/ns/shared'], 'a changed spec: what it no longer references is closed');

  watched.unregister('a');
  assert.deepEqual(watched.watching(), ['configmap/ns/shared'], 'b still references it');
  watched.unregister('b');
  watched.unregister('b');
  assert.deepEqual(watched.watching(), []);
  await pollUntil('every watch closed', () => server.watchCount === 0, { timeoutMs: 5000 });
});

test('reads come from the watch, follow updates without a GET, and an absent object reads as undefined', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  server.seed(CONFIGMAPS, { metadata: { name: 'cfg', namespace: 'ns' }, data: { MODE: 'fast' } });
  server.seed(SECRETS, { metadata: { name: 'other', namespace: 'ns' }, data: {} });
  const { api, gets } = countingClient(server);
  const watched = new WatchedObjects({ api, clock: systemClock, log: noopLogger });
  t.after(() => watched.close());
  const read = sourceReader(api, watched);
  const signal = AbortSignal.timeout(10_000);

  watched.register(pod('a', ['cfg', 'missing']));
  assert.deepEqual((await read('configmap', 'ns', 'cfg', signal))?.data, { MODE: 'fast' });
  assert.equal(await read('configmap', 'ns', 'missing', signal), undefined, 'NotFound, as a GET would say');
  await api.update(CONFIGMAPS, { metadata: { name: 'cfg', namespace: 'ns' }, data: { MODE: 'slow' } });
  await pollUntil('the update seen through the watch', async () => (await read('configmap', 'ns', 'cfg', signal))?.data?.MODE === 'slow', { timeoutMs: 5000 });
  assert.equal(gets(), 0, 'no GET of a watched object');

  assert.equal(await watched.read('secret', 'ns', 'other', signal), NOT_WATCHED, 'no pod references it');
  assert.equal((await read('secret', 'ns', 'other', signal))?.metadata.name, 'other', 'read by GET instead');
  assert.equal(gets(), 1);
});

test('podConfigSources: env, envFrom, volumes, projected sources and image pull secrets', () => {
  const p: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: {
      imagePullSecrets: [{ name: 'pull' }],
      initContainers: [{ name: 'i', image: 'x', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } }] }],
      containers: [{ name: 'c', image: 'x', env: [{ name: 'B', valueFrom: { secretKeyRef: { name: 's-env', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'cm-from' } }] }],
      volumes: [
        { name: 's', secret: { secretName: 's-vol' } },
        { name: 'p', projected: { sources: [{ configMap: { name: 'cm-proj' } }, { secret: { name: 's-proj' } }] } },
      ],
    },
  };
  assert.deepEqual(podConfigSources(p).sort(), [
    ['configmap', 'cm-env'], ['configmap', 'cm-from'], ['configmap', 'cm-proj'], ['secret', 'pull'], ['secret', 's-env'], ['secret', 's-proj'], ['secret', 's-vol'],
  ].sort());
});
