// kube-system/kube-dns: created at server start, kept by the next start, never on another Service's IP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import { clusterDnsIpOf, inServiceCidr } from './kube-dns-service.js';
import type { ApiServerOptions } from './server.js';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

/** Runs `fn` against a server on `store` that is closed afterwards; the store stays for the next start. */
async function withServer(store: ApiServerOptions['store'], o: Partial<ApiServerOptions>, fn: (call: TestApiServer['call']) => Promise<void>): Promise<void> {
  const srv = await startTestApiServer({ ...o, store });
  try {
    await fn(srv.call);
  } finally {
    await srv.close();
  }
}

const PATH = '/api/v1/namespaces/kube-system/services/kube-dns';

describe('kube-dns Service', () => {
  it('is created at start with kubeadm shape, and again at the next start after a delete', async () => {
    const store = createTempSqliteStore();
    try {
      await withServer(store, {}, async (call) => {
        const r = await call('GET', PATH);
        assert.equal(r.status, 200);
        assert.deepEqual(r.json.metadata.labels, { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' });
        assert.equal(r.json.spec.clusterIP, '10.96.0.10');
        assert.deepEqual(r.json.spec.clusterIPs, ['10.96.0.10']);
        assert.equal(r.json.spec.type, 'ClusterIP');
        assert.equal(r.json.spec.selector, undefined, 'no pods: the node-local resolvers serve it');
        assert.deepEqual(r.json.spec.ports.map((p: { name: string; port: number; protocol: string }) => `${p.name} ${p.port}/${p.protocol}`), ['dns 53/UDP', 'dns-tcp 53/TCP', 'metrics 9153/TCP']);
        // The dynamic allocator steps over the address.
        for (let i = 0; i < 10; i++) {
          const s = await call('POST', '/api/v1/namespaces/default/services', { metadata: { name: `s${i}` }, spec: { ports: [{ port: 80 }] } });
          assert.notEqual(s.json.spec.clusterIP, '10.96.0.10');
        }
        assert.equal((await call('DELETE', PATH)).status, 200);
      });
      await withServer(store, {}, async (call) => {
        assert.equal((await call('GET', PATH)).json.spec.clusterIP, '10.96.0.10', 'recreated at the next start');
      });
    } finally {
      await store.close();
    }
  });

  it('takes --cluster-dns, and leaves an existing kube-dns as it is', async () => {
    const store = createTempSqliteStore();
    try {
      await withServer(store, { clusterDnsIP: '10.96.0.53' }, async (call) => {
        assert.equal((await call('GET', PATH)).json.spec.clusterIP, '10.96.0.53');
      });
      await withServer(store, { clusterDnsIP: '10.96.0.10' }, async (call) => {
        assert.equal((await call('GET', PATH)).json.spec.clusterIP, '10.96.0.53', 'not reconciled, like kubeadm');
      });
    } finally {
      await store.close();
    }
  });

  it('is not created when another Service holds the address, and the server still starts', async () => {
    const store = createTempSqliteStore();
    try {
      await withServer(store, { clusterDnsIP: null }, async (call) => {
        assert.equal((await call('GET', PATH)).status, 404);
        assert.equal((await call('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'squatter' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 53 }] } })).status, 201);
      });
      await withServer(store, {}, async (call) => {
        assert.equal((await call('GET', PATH)).status, 404);
      });
    } finally {
      await store.close();
    }
  });

  it("defaults to the service range's 10th address", async () => {
    assert.equal(clusterDnsIpOf('10.96.0.0/16'), '10.96.0.10');
    assert.equal(clusterDnsIpOf('172.20.0.0/24'), '172.20.0.10');
    const store = createTempSqliteStore();
    try {
      await withServer(store, { serviceCidr: '10.100.0.0/16' }, async (call) => {
        assert.equal((await call('GET', PATH)).json.spec.clusterIP, '10.100.0.10');
      });
    } finally {
      await store.close();
    }
  });

  it('--cluster-dns must be an address of the service range', () => {
    assert.equal(inServiceCidr('10.100.0.10', '10.100.0.0/16'), true);
    assert.equal(inServiceCidr('10.96.0.10'), true);
    assert.equal(inServiceCidr('10.96.255.254'), true);
    assert.equal(inServiceCidr('10.96.0.0'), false);
    assert.equal(inServiceCidr('10.97.0.10'), false);
    assert.equal(inServiceCidr('fd00::a'), false);
    assert.equal(inServiceCidr('nope'), false);
  });
});
