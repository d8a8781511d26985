/**
 * The API server contract: the semantics agent and controller unit tests rely on the fake for,
 * each as the real API server has them (docs/reference/kubernetes-api.md §6, §8). One suite, run
 * against InMemoryApiServer (./in-memory-api-server.test.ts) and against the real server
 * (control-plane/src/apiserver/contract.test.ts): where the two disagree, the fake is wrong.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import type { ApiClient } from '../client/index.js';
import { CONFIGMAPS, DEPLOYMENTS, NAMESPACES, PODS } from '../types/resources.js';
import type { Deployment, Pod, WatchEvent } from '../types/index.js';

/** A server under the contract. */
export interface ContractTarget {
  /** A client allowed everything (the real server's admin). */
  client: ApiClient;
  /** One raw request, for what ApiClient never sends (a Content-Type no patch has). */
  raw(method: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

const pod = (name: string, extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'busybox' }], ...extra },
});

/** Registers the contract suite as `describe(name)`; one server for the suite, each case with its own names. */
export function apiServerContract(name: string, start: () => Promise<ContractTarget>): void {
  describe(name, () => {
    let s: ContractTarget;
    before(async () => {
      s = await start();
    });
    after(() => s.close());

    it('status and spec are written separately; spec changes bump generation', async () => {
      const deploys = s.client.resource(DEPLOYMENTS, 'default');
      const d = await deploys.create({ metadata: { name: 'web' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } } }, status: { replicas: 9 } } as Deployment);
      const withStatus = await deploys.updateStatus({ ...d, spec: { ...d.spec!, replicas: 7 }, status: { replicas: 1, observedGeneration: 1 } });
      assert.equal(withStatus.spec?.replicas, 1, 'status writes ignore spec');
      assert.equal(withStatus.status?.replicas, 1);
      assert.equal(withStatus.metadata.generation, 1);
      const labelled = await deploys.patch('web', { metadata: { labels: { x: 'y' } }, status: { replicas: 42 } }, { type: 'merge' });
      assert.equal(labelled.metadata.generation, 1, 'metadata changes keep generation');
      assert.equal(labelled.status?.replicas, 1, 'main-resource writes ignore status');
      const scaled = await deploys.patch('web', { spec: { replicas: 3 } }, { type: 'merge' });
      assert.equal(scaled.metadata.generation, 2);
    });

    it('pods on a node are deleted gracefully; the grace-0 delete removes them', async () => {
      const pods = s.client.resource(PODS, 'default');
      await pods.create(pod('unscheduled'));
      await pods.delete('unscheduled');
      await assert.rejects(pods.get('unscheduled'), (e) => hasCode(e, 'ERR_NOT_FOUND'), 'no node to wait for');

      await pods.create(pod('bound', { nodeName: 'n1', terminationGracePeriodSeconds: 5 }));
      const terminating = (await pods.delete('bound')) as Pod;
      assert.ok(terminating.metadata.deletionTimestamp);
      assert.equal(terminating.metadata.deletionGracePeriodSeconds, 5);
      const again = (await pods.delete('bound', { gracePeriodSeconds: 30 })) as Pod;
      assert.equal(again.metadata.deletionTimestamp, terminating.metadata.deletionTimestamp, 'a second delete does not restart the clock');
      await pods.patchStatus('bound', { status: { phase: 'Succeeded' } }, { type: 'merge' });
      assert.ok((await pods.get('bound')).metadata.deletionTimestamp, 'status writes keep it terminating');
      await assert.rejects(pods.delete('bound', { gracePeriodSeconds: 0, preconditions: { uid: 'other' } }), (e) => hasCode(e, 'ERR_CONFLICT'));
      await pods.delete('bound', { gracePeriodSeconds: 0, preconditions: { uid: terminating.metadata.uid } });
      await assert.rejects(pods.get('bound'), (e) => hasCode(e, 'ERR_NOT_FOUND'));
    });

    it('finalizers hold an object until they are removed', async () => {
      const cms = s.client.resource(CONFIGMAPS, 'default');
      await cms.create({ metadata: { name: 'c', finalizers: ['example.com/hold'] } });
      await cms.delete('c');
      const held = await cms.get('c');
      assert.ok(held.metadata.deletionTimestamp);
      await cms.patch('c', { metadata: { finalizers: null } }, { type: 'merge' });
      await assert.rejects(cms.get('c'), (e) => hasCode(e, 'ERR_NOT_FOUND'));
    });

    it('create: generateName, namespace from the URL, mismatch and bad bodies are rejected; an unknown patch type is 415 even for a missing object', async () => {
      const c = s.client;
      const generated = await c.create(CONFIGMAPS, { metadata: { generateName: 'gen-', namespace: 'default' } });
      assert.match(generated.metadata.name ?? '', /^gen-.{5}$/);
      await assert.rejects(c.create(CONFIGMAPS, { metadata: { namespace: 'default' } }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
      await assert.rejects(c.create(CONFIGMAPS, { metadata: { name: 'x', namespace: 'a' } }, { namespace: 'b' }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
      const res = await s.raw('PATCH', '/api/v1/namespaces/default/configmaps/x', { 'Content-Type': 'text/plain' }, '{}');
      await c.create(CONFIGMAPS, { metadata: { name: 'x', namespace: 'default' } });
      const res2 = await s.raw('PATCH', '/api/v1/namespaces/default/configmaps/x', { 'Content-Type': 'text/plain' }, '{}');
      assert.equal(res.status, 415, 'the media type is checked before the object is looked up');
      assert.equal(res2.status, 415);
      assert.equal((JSON.parse(res2.body) as { reason: string }).reason, 'UnsupportedMediaType');
    });

    it('binding assigns once; eviction deletes gracefully', async () => {
      const c = s.client;
      await c.create(PODS, pod('p'));
      await c.create(PODS, { metadata: { name: 'p', namespace: 'default' }, target: { name: 'n1' } }, { name: 'p', subresource: 'binding' });
      await assert.rejects(
        c.create(PODS, { metadata: { name: 'p', namespace: 'default' }, target: { name: 'n2' } }, { name: 'p', subresource: 'binding' }),
        (e) => hasCode(e, 'ERR_CONFLICT'),
      );
      await c.create(PODS, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p', namespace: 'default' } }, { name: 'p', subresource: 'eviction' });
      assert.ok((await c.get(PODS, 'p', { namespace: 'default' })).metadata.deletionTimestamp);
    });

    it('a watch without resourceVersion starts with ADDED for what exists, then ends at timeoutSeconds', async () => {
      const c = s.client;
      for (const ns of ['watched', 'other']) await c.create(NAMESPACES, { metadata: { name: ns } });
      await c.create(CONFIGMAPS, { metadata: { name: 'a', namespace: 'watched' } });
      await c.create(CONFIGMAPS, { metadata: { name: 'b', namespace: 'other' } });
      const seen: WatchEvent[] = [];
      for await (const e of c.watch(CONFIGMAPS, { namespace: 'watched', timeoutSeconds: 1 })) seen.push(e);
      assert.deepEqual(seen.map((e) => [e.type, (e.object as { metadata: { name?: string } }).metadata.name]), [['ADDED', 'a']]);
    });
  });
}
