// Two API servers on one store (as two `nodelet server` processes on one etcd): Service address
// allocation does not hand out one address twice, and the default/kubernetes endpoints list both
// servers without the two overwriting each other.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import { ENDPOINT_LEASE_PREFIX } from './endpoint-leases.js';
import { keepKubernetesService } from './kubernetes-service.js';
import { startTestApiServer } from './testing/test-server.js';

/**
 * Resolves once the lease of each of `ips` has been renewed at least `n` times since the call.
 * A loop renews and then reconciles, so between two renewals a whole reconcile ran: with n = 3,
 * each loop has reconciled in full at least twice after the call.
 */
async function renewals(store: Store, ips: readonly string[], n: number): Promise<void> {
  const rev = async (ip: string): Promise<number | undefined> => (await store.get(ENDPOINT_LEASE_PREFIX + ip))?.modRevision;
  const last = new Map(await Promise.all(ips.map(async (ip) => [ip, await rev(ip)] as const)));
  const count = new Map(ips.map((ip) => [ip, 0]));
  await pollUntil(`${n} renewals of each lease`, async () => {
    for (const ip of ips) {
      const now = await rev(ip);
      if (now !== last.get(ip)) count.set(ip, count.get(ip)! + 1);
      last.set(ip, now);
    }
    return ips.every((ip) => count.get(ip)! >= n);
  }, { timeoutMs: 5000, intervalMs: 5 });
}

describe('two API servers on one store', () => {
  it('Services created at the same time through both get distinct ClusterIPs and NodePorts', async (t) => {
    const store = createTempSqliteStore();
    t.after(() => store.close());
    const a = await startTestApiServer({ store });
    t.after(() => a.close());
    const b = await startTestApiServer({ store });
    t.after(() => b.close());
    const created = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).call('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: `s${i}` }, spec: { type: 'NodePort', ports: [{ port: 80 }] },
    })));
    for (const r of created) assert.equal(r.status, 201, JSON.stringify(r.json));
    const ips = created.map((r) => r.json.spec.clusterIP as string);
    const nodePorts = created.map((r) => r.json.spec.ports[0].nodePort as number);
    assert.equal(new Set(ips).size, ips.length, `duplicate ClusterIP: ${ips.join(' ')}`);
    assert.equal(new Set(nodePorts).size, nodePorts.length, `duplicate NodePort: ${nodePorts.join(' ')}`);
  });

  it('default/kubernetes lists every live server; a stopped or expired one is removed; the servers do not fight', async (t) => {
    const store = createTempSqliteStore();
    t.after(() => store.close());
    const a = await startTestApiServer({ store });
    t.after(() => a.close());
    const b = await startTestApiServer({ store });
    t.after(() => b.close());
    const opts = { port: 6443, serviceIp: '10.96.0.1', intervalMs: 50, log: noopLogger };
    const stopA = new AbortController();
    const stopB = new AbortController();
    const loopA = keepKubernetesService(a.server.context, { ...opts, advertiseAddress: '192.0.2.10' }, stopA.signal);
    const loopB = keepKubernetesService(b.server.context, { ...opts, advertiseAddress: '192.0.2.11' }, stopB.signal);
    t.after(async () => {
      stopA.abort();
      stopB.abort();
      await Promise.all([loopA, loopB]);
    });
    const addresses = async (): Promise<string> => {
      const ep = await a.call('GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      const slice = await b.call('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
      return `${(ep.json.subsets?.[0]?.addresses ?? []).map((x: { ip: string }) => x.ip).join(',')} | ${(slice.json.endpoints ?? []).flatMap((e: { addresses: string[] }) => e.addresses).join(',')}`;
    };
    await pollUntil('both servers listed', async () => (await addresses()) === '192.0.2.10,192.0.2.11 | 192.0.2.10,192.0.2.11', { timeoutMs: 5000 });
    // More rounds of both loops: the Endpoints object is not rewritten.
    const rv = (await a.call('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json.metadata.resourceVersion;
    await renewals(store, ['192.0.2.10', '192.0.2.11'], 3);
    assert.equal((await a.call('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json.metadata.resourceVersion, rv, 'no fight between the servers');

    // A server that died long ago (its lease not renewed) is dropped and its lease deleted.
    await store.create(`${ENDPOINT_LEASE_PREFIX}192.0.2.99`, Buffer.from(JSON.stringify({ ip: '192.0.2.99', port: 6443, renewTime: Date.now() - 60_000 })));
    await pollUntil('expired lease removed', async () => !(await store.get(`${ENDPOINT_LEASE_PREFIX}192.0.2.99`)), { timeoutMs: 5000 });
    assert.equal(await addresses(), '192.0.2.10,192.0.2.11 | 192.0.2.10,192.0.2.11');

    // A live one that is not renewed yet is listed.
    await store.create(`${ENDPOINT_LEASE_PREFIX}192.0.2.12`, Buffer.from(JSON.stringify({ ip: '192.0.2.12', port: 6443, renewTime: Date.now() })));
    await pollUntil('third server listed', async () => (await addresses()).startsWith('192.0.2.10,192.0.2.11,192.0.2.12 |'), { timeoutMs: 5000 });
    await store.delete(`${ENDPOINT_LEASE_PREFIX}192.0.2.12`);
    await pollUntil('third server gone', async () => (await addresses()) === '192.0.2.10,192.0.2.11 | 192.0.2.10,192.0.2.11', { timeoutMs: 5000 });

    // B stops gracefully: its address goes at once; A, the last one, keeps its own at its stop.
    stopB.abort();
    await loopB;
    assert.equal(await addresses(), '192.0.2.10 | 192.0.2.10');
    stopA.abort();
    await loopA;
    assert.equal(await addresses(), '192.0.2.10 | 192.0.2.10', 'the last server stays listed');
  });
});
