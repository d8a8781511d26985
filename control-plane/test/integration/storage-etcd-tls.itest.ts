// etcd with client TLS (--cert-file --key-file --trusted-ca-file --client-cert-auth, certificates
// from the control plane's PKI code), reached the way `nodelet server` does it: etcd:// plus
// --etcd-cafile/--etcd-certfile/--etcd-keyfile through openStore. Also: what a write whose reply
// is lost returns, with a TCP proxy on loopback that holds back or drops bytes.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { ApiClient, CONFIGMAPS } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startControlPlane } from '../../src/control-plane.js';
import { createCa, issueCertificate, loadCa } from '../../src/pki/certs.js';
import { createEtcdStore, openStore, type Store } from '../../src/storage/index.js';
import { runStoreConformance } from '../../src/storage/testing/conformance.js';
import { etcdUnavailableReason, startTestEtcd, type TestEtcd } from '../../src/storage/testing/etcd.js';
import { dec, enc } from '../../src/storage/testing/helpers.js';
import { startTcpProxy, type TcpProxy } from '../../src/storage/testing/tcp-proxy.js';
import { cleanups } from '@nodelet/base/testing';

const skip = etcdUnavailableReason() ?? false;
let etcd: TestEtcd | undefined;

before(async () => {
  if (!skip) etcd = await startTestEtcd({ tls: true });
});
after(async () => {
  await etcd?.stop();
});

const hostPort = (): string => new URL(etcd!.endpoint).host;

runStoreConformance(
  'etcd over TLS (etcd:// + --etcd-cafile/--etcd-certfile/--etcd-keyfile)',
  async () =>
    openStore(`etcd://${hostPort()}`, {
      dataDir: '/nonexistent',
      compactor: false,
      etcdPrefix: `/t-${randomUUID()}`,
      etcdTls: { caFile: etcd!.tls!.caFile, certFile: etcd!.tls!.certFile, keyFile: etcd!.tls!.keyFile },
    }),
  { skip },
);

describe('nodelet server on etcd over TLS', { skip }, () => {
  it('serves objects stored in the TLS etcd (flags as main.ts passes them)', async (t) => {
    const cleanup = cleanups(t);
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-etcd-tls-cp-'));
    cleanup(() => rm(dir, { recursive: true, force: true }));
    const cp = await startControlPlane({
      dataDir: dir,
      datastoreEndpoint: `etcd://${hostPort()}`,
      etcdTls: { caFile: etcd!.tls!.caFile, certFile: etcd!.tls!.certFile, keyFile: etcd!.tls!.keyFile },
      bindAddress: '127.0.0.1',
      port: 0,
      registryAddress: '',
      controllers: false,
      logger: noopLogger,
    });
    cleanup(() => cp.close());
    const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
    cleanup(() => client.close());
    const name = `cm-${randomUUID().slice(0, 8)}`;
    await client.resource(CONFIGMAPS, 'default').create({ metadata: { name, namespace: 'default' }, data: { k: 'v' } });
    const raw = createEtcdStore({ endpoints: [etcd!.endpoint], tls: etcd!.tls! });
    cleanup(() => raw.close());
    const kv = await raw.get(`/registry/configmaps/default/${name}`);
    assert.ok(kv, 'the object is in etcd under /registry');
  });
});

describe('etcd over TLS: who is refused', { skip }, () => {
  /**
   * The store refuses to read, and the error chain says why: `why` tells a TLS refusal (the etcd
   * server's alert, or the client's verification error) from an etcd that simply is not there.
   */
  const refused = async (t: TestContext, store: Store, why: RegExp): Promise<void> => {
    t.after(() => store.close());
    await assert.rejects(store.get('/registry/x'), (err: unknown) => {
      assert.equal((err as { code?: unknown }).code, 'ERR_UNAVAILABLE', String(err));
      const chain: string[] = [];
      for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) chain.push(String((e as Error).message));
      assert.match(chain.join(' <- '), why);
      return true;
    });
  };
  /** etcd's answer to a client certificate it does not accept: TLS alert 42, bad_certificate. */
  const BAD_CERTIFICATE_ALERT = /alert bad certificate.*SSL alert number 42/;

  it('a plaintext client is refused (etcd is up and listening: the refusal is not unreachability)', async (t) => {
    const { hostname, port } = new URL(etcd!.endpoint);
    await new Promise<void>((resolve, reject) => {
      const s = connect({ host: hostname, port: Number(port) }, () => {
        s.destroy();
        resolve();
      });
      s.on('error', reject);
    });
    await refused(t, createEtcdStore({ endpoints: [`http://${hostPort()}`], requestTimeoutMs: 3000 }), /Failed to connect/);
  });

  it('a TLS client without a client certificate is refused (--client-cert-auth)', async (t) => {
    await refused(t, createEtcdStore({ endpoints: [etcd!.endpoint], tls: { ca: etcd!.tls!.ca }, requestTimeoutMs: 3000 }), BAD_CERTIFICATE_ALERT);
  });

  it('a client certificate from another CA is refused, and so is a server the client does not trust', async (t) => {
    const otherCaPair = await createCa('not-the-etcd-ca');
    const other = await issueCertificate(await loadCa(otherCaPair), { commonName: 'intruder', usage: 'client' });
    await refused(t, createEtcdStore({ endpoints: [etcd!.endpoint], tls: { ca: etcd!.tls!.ca, cert: Buffer.from(other.certPem), key: Buffer.from(other.keyPem) }, requestTimeoutMs: 3000 }), BAD_CERTIFICATE_ALERT);
    await refused(t, createEtcdStore({ endpoints: [etcd!.endpoint], tls: { ca: Buffer.from(otherCaPair.certPem), cert: etcd!.tls!.cert, key: etcd!.tls!.key }, requestTimeoutMs: 3000 }), /unable to verify the first certificate/);
  });

  it('the same client with the right certificate is served', async (t) => {
    const store = createEtcdStore({ endpoints: [etcd!.endpoint], tls: etcd!.tls!, prefix: `/t-${randomUUID()}` });
    t.after(() => store.close());
    const rev = await store.create('/registry/x', enc('1'));
    assert.equal((await store.get('/registry/x'))?.modRevision, rev);
  });
});

describe('etcd: a write whose reply is lost', { skip }, () => {
  interface Rig {
    proxy: TcpProxy;
    /** Through the proxy. */
    store: Store;
    /** Straight to etcd, to see what it holds. */
    direct: Store;
  }
  const rig = async (t: TestContext): Promise<Rig> => {
    const proxy = await startTcpProxy(hostPort());
    t.after(() => proxy.close());
    const prefix = `/t-${randomUUID()}`;
    const store = createEtcdStore({ endpoints: [`https://${proxy.address}`], tls: etcd!.tls!, prefix, requestTimeoutMs: 5000 });
    const direct = createEtcdStore({ endpoints: [etcd!.endpoint], tls: etcd!.tls!, prefix });
    t.after(() => Promise.all([store.close(), direct.close()]));
    return { proxy, store, direct };
  };
  /** Waits until etcd holds `check`, then cuts the connection that carries the held reply. */
  const cutOnceApplied = async (r: Rig, what: string, check: () => Promise<boolean>): Promise<void> => {
    await pollUntil(what, async () => (await check()) || undefined, { timeoutMs: 5000, intervalMs: 20 });
    r.proxy.cut();
  };

  it('an update that committed returns its revision, not a false ERR_CONFLICT', async (t) => {
    const r = await rig(t);
    const r1 = await r.store.create('/registry/cm/ns/a', enc('v1'));
    r.proxy.holdReplies();
    const pending = r.store.update('/registry/cm/ns/a', enc('v2'), r1);
    let committed = 0;
    await cutOnceApplied(r, 'etcd to apply the update', async () => {
      committed = (await r.direct.get('/registry/cm/ns/a'))?.modRevision ?? 0;
      return committed > r1;
    });
    assert.equal(await pending, committed);
    const kv = await r.direct.get('/registry/cm/ns/a');
    assert.deepEqual([dec(kv?.value), kv?.modRevision], ['v2', committed], 'written exactly once');
    assert.equal(await r.direct.currentRevision(), committed, 'no second write');
  });

  it('a create that committed returns its revision, not a false ERR_ALREADY_EXISTS', async (t) => {
    const r = await rig(t);
    await r.store.currentRevision(); // the store has seen a revision before sending
    r.proxy.holdReplies();
    const pending = r.store.create('/registry/cm/ns/b', enc('v1'));
    let created = 0;
    await cutOnceApplied(r, 'etcd to apply the create', async () => {
      created = (await r.direct.get('/registry/cm/ns/b'))?.createRevision ?? 0;
      return created > 0;
    });
    assert.equal(await pending, created);
  });

  it('an update lost on its way is sent again once etcd shows it did not apply', async (t) => {
    const r = await rig(t);
    const r1 = await r.store.create('/registry/cm/ns/c', enc('v1'));
    r.proxy.dropRequests();
    const pending = r.store.update('/registry/cm/ns/c', enc('v2'), r1);
    await pollUntil('the request to be dropped', () => r.proxy.droppedBytes > 0, { timeoutMs: 5000, intervalMs: 20 });
    r.proxy.cut();
    const r2 = await pending;
    assert.ok(r2 > r1);
    const kv = await r.direct.get('/registry/cm/ns/c');
    assert.deepEqual([dec(kv?.value), kv?.modRevision], ['v2', r2]);
  });

  it('a delete that committed is ERR_UNAVAILABLE (outcome unknown), not a false ERR_NOT_FOUND', async (t) => {
    const r = await rig(t);
    const r1 = await r.store.create('/registry/cm/ns/d', enc('v1'));
    r.proxy.holdReplies();
    const pending = r.store.delete('/registry/cm/ns/d', r1);
    await cutOnceApplied(r, 'etcd to apply the delete', async () => (await r.direct.get('/registry/cm/ns/d')) === undefined);
    await assert.rejects(pending, (err: Error & { code?: string }) => err.code === 'ERR_UNAVAILABLE' && /outcome unknown/.test(err.message));
  });

  it('a read whose request is lost is retried', async (t) => {
    const r = await rig(t);
    await r.store.create('/registry/cm/ns/e', enc('v1'));
    r.proxy.dropRequests();
    const pending = r.store.get('/registry/cm/ns/e');
    await pollUntil('the request to be dropped', () => r.proxy.droppedBytes > 0, { timeoutMs: 5000, intervalMs: 20 });
    r.proxy.cut();
    assert.equal(dec((await pending)?.value), 'v1');
  });
});
