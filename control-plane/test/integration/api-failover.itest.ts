// Agent fail-over against real servers: two in-process control planes on one etcd (shared PKI
// and admin token), one ApiClient given both URLs and an informer on it. When the server the
// client uses stops, writes succeed on the other within seconds, and the informer re-watches
// there from its last resourceVersion: no relist, and every later change arrives.
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { ApiClient, CONFIGMAPS, Informer, type ConfigMap, type RequestDiagnostic } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { etcdUnavailableReason, startTestEtcd, type TestEtcd } from '../../src/storage/testing/etcd.js';
import { startServersOnEtcd, type ServersOnEtcd } from '../../src/testing/servers-on-etcd.js';

const skip = etcdUnavailableReason() ?? false;
let etcd: TestEtcd | undefined;
let servers: ServersOnEtcd | undefined;

before(async () => {
  if (skip) return;
  etcd = await startTestEtcd();
  servers = await startServersOnEtcd({ endpoint: etcd.endpoint });
});
after(async () => {
  await servers?.close();
  await etcd?.stop();
});

describe('API client fail-over between two servers on one etcd', { skip }, () => {
  it('writes move to the other server within seconds; the informer re-watches from its resourceVersion without a relist', async (t) => {
    const s = servers!;
    const client = new ApiClient({ server: s.urls[0]!, servers: [s.urls[1]!], token: s.adminToken, ca: s.caPem, timeoutMs: 10_000 });
    t.after(() => client.close());
    const requests: RequestDiagnostic[] = [];
    const onRequest = (d: unknown): void => void requests.push(d as RequestDiagnostic);
    diagnostics.subscribe('nodelet:api:request', onRequest);
    t.after(() => diagnostics.unsubscribe('nodelet:api:request', onRequest));

    const informer = new Informer<ConfigMap>({ client, resource: CONFIGMAPS, namespace: 'default', backoff: { initialMs: 100, maxMs: 1_000 } });
    t.after(() => informer.close());
    const create = (name: string): Promise<ConfigMap> => client.create(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { name } });
    await create('before-1');
    informer.start();
    await informer.waitForSync();
    await create('before-2');
    await pollUntil('event before the kill', () => informer.get('default/before-2') !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    const lists = (): number => requests.filter((r) => r.method === 'GET' && !r.stream && r.path.endsWith('/configmaps')).length;
    const listsBefore = lists();
    assert.equal(client.server, `${s.urls[0]}/`);

    await s.stop(0);
    const killedAt = performance.now();
    // The next write is the agent's "next successful write": it must not need the caller to retry.
    await create('after-1');
    const failoverMs = performance.now() - killedAt;
    assert.equal(client.server, `${s.urls[1]}/`);
    assert.ok(failoverMs < 5_000, `fail-over took ${failoverMs} ms`);
    t.diagnostic(`first write after the server was gone succeeded in ${failoverMs.toFixed(0)} ms`);

    await create('after-2');
    await pollUntil('events after the fail-over', () => informer.get('default/after-1') !== undefined && informer.get('default/after-2') !== undefined, { timeoutMs: 10_000, intervalMs: 20 });
    assert.equal(lists(), listsBefore, 'the informer re-watched instead of relisting');
    const ours = informer.list().map((c) => c.metadata.name!).filter((n) => /^(before|after)-/.test(n));
    assert.deepEqual(ours.sort(), ['after-1', 'after-2', 'before-1', 'before-2']);
  });
});
