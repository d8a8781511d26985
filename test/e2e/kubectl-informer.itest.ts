// A @kubernetes/client-node 1.4.0 informer against the server, through a TCP proxy the test can
// cut: it resumes after a dropped watch without relisting or duplicate adds, and relists after
// the store is compacted past its resourceVersion (410 Expired as a watch ERROR event).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';
import { pollUntil } from '@nodelet/base';

/** Forwards 127.0.0.1:<port> to `target`; `drop()` cuts every open connection. */
async function startCuttableProxy(target: number): Promise<{ port: number; drop(): void; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    drop: () => open.forEach((s) => s.destroy()),
    close: () => new Promise<void>((r) => {
      open.forEach((s) => s.destroy());
      server.close(() => r());
    }),
  };
}

const pod = (name: string): k8s.V1Pod => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } });

describe('client-node 1.4.0 informer', () => {
  let env: KubectlEnv;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  before(async () => {
    env = await startKubectlEnv();
    proxy = await startCuttableProxy(env.cp.port);
  });
  after(async () => {
    await proxy?.close();
    await env?.close();
  });

  it('survives a dropped watch and a forced compaction', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'lab', server: `https://127.0.0.1:${proxy.port}`, caData: Buffer.from(env.cp.caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'admin', token: env.cp.adminToken }],
      contexts: [{ name: 'lab', cluster: 'lab', user: 'admin' }],
      currentContext: 'lab',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    let lists = 0;
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () => {
      lists++;
      return core.listNamespacedPod({ namespace: 'default' });
    });
    const adds: string[] = [];
    const deletes: string[] = [];
    const errors: unknown[] = [];
    let stopped = false;
    informer.on('add', (p) => adds.push(p.metadata!.name!));
    informer.on('delete', (p) => deletes.push(p.metadata!.name!));
    // client-node reports a cut stream as an error and stops; restarting keeps its
    // resourceVersion (no relist), which is what the documented informer loop does.
    informer.on('error', (err) => {
      if (stopped) return;
      errors.push(err);
      setTimeout(() => void (stopped ? undefined : informer.start().catch((e: unknown) => errors.push(e))), 100);
    });
    const names = (): string[] => informer.list().map((p) => p.metadata!.name!).sort();
    try {
      await core.createNamespacedPod({ namespace: 'default', body: pod('a') });
      await informer.start();
      await pollUntil('add(a)', () => adds.includes('a'), { timeoutMs: 5000, intervalMs: 25 });
      assert.equal(lists, 1);

      // 1. A dropped watch: the informer re-watches from its resourceVersion.
      proxy.drop();
      await core.createNamespacedPod({ namespace: 'default', body: pod('b') });
      await pollUntil('add(b) after the dropped watch', () => adds.includes('b'), { timeoutMs: 10_000, intervalMs: 25 });
      await core.deleteNamespacedPod({ namespace: 'default', name: 'a' });
      await pollUntil('delete(a)', () => deletes.includes('a'), { timeoutMs: 10_000, intervalMs: 25 });

      // 2. Writes elsewhere move the revision past the informer's; compaction drops that history.
      for (let i = 0; i < 3; i++) {
        await core.createNamespacedConfigMap({ namespace: 'kube-public', body: { metadata: { name: `bump-${i}` } } });
      }
      const rev = await env.cp.store.currentRevision();
      await env.cp.store.compact(rev);
      assert.equal(lists, 1, 'resuming after the dropped watch relisted');
      const listsBefore = lists;
      proxy.drop();
      await pollUntil('a relist after 410 Expired', () => lists > listsBefore, { timeoutMs: 10_000, intervalMs: 25 });
      await core.createNamespacedPod({ namespace: 'default', body: pod('c') });
      await pollUntil('add(c) after the relist', () => adds.includes('c'), { timeoutMs: 10_000, intervalMs: 25 });

      assert.deepEqual(names(), ['b', 'c']);
      assert.deepEqual(adds.filter((n) => n === 'b'), ['b'], 'b was added twice');
      assert.equal(lists, listsBefore + 1, 'the dropped watch in step 1 caused a relist, or step 2 more than one');
      for (const e of errors) assert.equal((e as { code?: string }).code, 'ERR_STREAM_PREMATURE_CLOSE', String(e));
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});
