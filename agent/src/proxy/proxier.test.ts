import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { pollUntil, noopLogger } from '@nodelet/base';
import { ENDPOINTSLICES, Informer, NODES, SERVICES } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ServiceProxy } from './proxier.js';
import { resolveProxyConfig } from './config.js';
import type { CommandRunner } from './exec.js';
import { service, slice } from './testing/fixtures.js';

const FULL = 'table ip nodelet-proxy\ndelete table ip nodelet-proxy\ntable ip nodelet-proxy {';

/**
 * Plays nft: remembers the scripts applied (each under a new process ID) and plays `nft monitor`,
 * printing a batch for each of them and, on `tamper()`, one by a process that is not the proxy's.
 */
class FakeNft implements CommandRunner {
  readonly applied: string[] = [];
  readonly calls: string[] = [];
  exists: boolean;
  /** Fail the next `nft -f` this many times. */
  failNext = 0;
  #pid = 1000;
  #generation = 1;
  #monitor: { onLine: (l: string) => void; end: (code: number) => void } | undefined;

  constructor(exists = false) {
    this.exists = exists;
  }

  get monitoring(): boolean {
    return this.#monitor !== undefined;
  }

  async run(argv: readonly string[], o: { input?: string; onSpawn?: (pid: number) => void }) {
    this.calls.push(argv.join(' '));
    if (argv[0] === 'nft' && argv[1] === '-f') {
      const pid = ++this.#pid;
      o.onSpawn?.(pid);
      if (this.failNext > 0) {
        this.failNext--;
        return { code: 1, stdout: '', stderr: 'Error: Could not process rule: No such file or directory' };
      }
      const script = o.input ?? '';
      this.applied.push(script);
      this.exists = !script.startsWith('table ip nodelet-proxy\ndelete table ip nodelet-proxy\n') || script.includes('{');
      this.#batch(pid, 'add rule ip nodelet-proxy services counter');
      return { code: 0, stdout: '', stderr: '' };
    }
    if (argv[0] === 'nft' && argv.includes('list')) {
      if (!this.exists) return { code: 1, stdout: '', stderr: 'Error: No such file or directory' };
      const doc = { nftables: [{ table: { family: 'ip', name: 'nodelet-proxy', handle: 1 } }] };
      return { code: 0, stdout: JSON.stringify(doc), stderr: '' };
    }
    return { code: 0, stdout: '', stderr: '' };
  }

  stream(argv: readonly string[], o: { signal: AbortSignal; onLine: (l: string) => void }) {
    this.calls.push(argv.join(' '));
    return new Promise<number>((resolve, reject) => {
      const end = (code: number): void => {
        this.#monitor = undefined;
        resolve(code);
      };
      this.#monitor = { onLine: o.onLine, end };
      o.signal.addEventListener('abort', () => {
        this.#monitor = undefined;
        reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
      }, { once: true });
    });
  }

  /** Another process flushes a chain of the table. */
  tamper(): void {
    this.#batch(99, 'delete rule ip nodelet-proxy services handle 4');
  }

  /** `nft monitor` dies. */
  killMonitor(): void {
    this.#monitor?.end(1);
  }

  #batch(pid: number, line: string): void {
    const m = this.#monitor;
    if (!m) return;
    setImmediate(() => {
      m.onLine('add table ip other');
      m.onLine(line);
      m.onLine(`# new generation ${++this.#generation} by process ${pid} (nft)`);
    });
  }
}

async function setup(t: { after(fn: () => Promise<void> | void): void }, fake: FakeNft, cfg = {}) {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const api = server.client();
  t.after(() => api.close());
  await api.resource(SERVICES, 'default').create(service('web', '10.96.0.5'));
  const proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({ minSyncPeriod: '10ms', ...cfg }), log: noopLogger, registry: new Registry(), runner: fake });
  t.after(() => proxy.close());
  return { proxy, api };
}

test('start installs the base table (no services yet) before anything is synced, then the first sync adds the Service', async (t) => {
  const fake = new FakeNft();
  const { proxy } = await setup(t, fake);
  assert.equal(fake.calls[0], 'sysctl -w net.ipv4.conf.all.route_localnet=1');
  assert.equal(fake.applied.length, 1, 'the base table is written by start()');
  assert.match(fake.applied[0]!, /reject traffic to unallocated ClusterIPs/);
  assert.doesNotMatch(fake.applied[0]!, /10\.96\.0\.5/);
  await proxy.synced;
  assert.match(fake.applied.at(-1)!, /10\.96\.0\.5 \. tcp \. 80 comment "default\/web:\/tcp" : goto reject-chain/);
});

test('a table left by a previous run is kept until the first sync replaces it', async (t) => {
  const fake = new FakeNft(true);
  const { proxy } = await setup(t, fake);
  await proxy.synced;
  assert.ok(fake.applied.length > 0);
  assert.ok(fake.applied.every((s) => s.includes('10.96.0.5')), 'never an empty base table over the old rules');
});

const count = async (h: { get(): Promise<{ values: Array<{ metricName?: string; value: number }> }> }, name: string): Promise<number> =>
  (await h.get()).values.find((v) => v.metricName === name)?.value ?? 0;

test('after the first (full) sync, a change is written as a partial transaction of only what changed', async (t) => {
  const fake = new FakeNft();
  const synced: string[] = [];
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const api = server.client();
  t.after(() => api.close());
  await api.resource(SERVICES, 'default').create(service('web', '10.96.0.5'));
  const proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({ minSyncPeriod: '10ms' }), log: noopLogger, registry: new Registry(), runner: fake, onSync: (i) => synced.push(i.mode) });
  t.after(() => proxy.close());
  await proxy.synced;
  assert.ok(fake.applied.at(-1)!.startsWith(FULL), 'the first sync writes the whole table');
  const before = fake.applied.length;
  await api.resource(SERVICES, 'default').create(service('db', '10.96.0.6'));
  await pollUntil('a sync with the new Service', () => fake.applied.length > before, { timeoutMs: 2000, intervalMs: 5 });
  const tx = fake.applied.at(-1)!;
  assert.ok(!tx.includes('delete table'), tx);
  assert.deepEqual(tx.trim().split('\n').sort(), [
    'add element ip nodelet-proxy cluster-ips { 10.96.0.6 }',
    'add element ip nodelet-proxy no-endpoint-services { 10.96.0.6 . tcp . 80 comment "default/db:/tcp" : goto reject-chain }',
  ]);
  assert.deepEqual(synced, ['full', 'partial']);
  assert.equal(await count(proxy.metrics.syncPartialDuration, 'kubeproxy_sync_partial_proxy_rules_duration_seconds_count'), 1);
  assert.equal(await count(proxy.metrics.syncFullDuration, 'kubeproxy_sync_full_proxy_rules_duration_seconds_count'), 1);
  assert.equal((await proxy.metrics.driftRepairs.get()).values[0]?.value ?? 0, 0, 'the proxy’s own transactions are not drift');
});

test('drift: another process changing the table forces a full rewrite at once', async (t) => {
  const fake = new FakeNft();
  const { proxy } = await setup(t, fake);
  await proxy.synced;
  await pollUntil('nft monitor running', () => fake.monitoring, { timeoutMs: 2000, intervalMs: 5 });
  const writes = fake.applied.length;
  fake.tamper();
  await pollUntil('a rewrite after the tampering', () => fake.applied.length > writes, { timeoutMs: 2000, intervalMs: 5 });
  assert.ok(fake.applied.at(-1)!.startsWith(FULL));
  assert.equal((await proxy.metrics.driftRepairs.get()).values[0]?.value, 1);
});

test('nft monitor dying leads to a full rewrite on the next drift tick, which restarts it', async (t) => {
  const fake = new FakeNft();
  const { proxy } = await setup(t, fake, { driftCheckPeriod: '20ms' });
  await proxy.synced;
  await pollUntil('nft monitor running', () => fake.monitoring, { timeoutMs: 2000, intervalMs: 5 });
  const writes = fake.applied.length;
  fake.killMonitor();
  await pollUntil('a rewrite and a new monitor', () => fake.applied.length > writes && fake.monitoring, { timeoutMs: 2000, intervalMs: 5 });
  assert.ok(fake.applied.at(-1)!.startsWith(FULL));
  assert.equal(fake.calls.filter((c) => c === 'nft monitor').length, 2);
});

test('a failed partial transaction is retried as a full one', async (t) => {
  const fake = new FakeNft();
  const { proxy, api } = await setup(t, fake);
  await proxy.synced;
  fake.failNext = 1;
  const writes = fake.applied.length;
  await api.resource(SERVICES, 'default').create(service('db', '10.96.0.6'));
  await pollUntil('the retry', () => fake.applied.length > writes, { timeoutMs: 5000, intervalMs: 10 });
  assert.ok(fake.applied.at(-1)!.startsWith(FULL));
  assert.match(fake.applied.at(-1)!, /10\.96\.0\.6/);
  assert.equal((await proxy.metrics.syncFailures.get()).values[0]?.value, 1);
});

test('chains that went stale are deleted about a second later in a transaction of their own, without a sync', async (t) => {
  const fake = new FakeNft();
  const synced: string[] = [];
  const syncedAt: number[] = [];
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const api = server.client();
  t.after(() => api.close());
  await api.resource(SERVICES, 'default').create(service('web', '10.96.0.5'));
  await api.resource(ENDPOINTSLICES, 'default').create(slice('web', [{ ip: '10.244.0.11' }]));
  const proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({ minSyncPeriod: '10ms' }), log: noopLogger, registry: new Registry(), runner: fake, onSync: (i) => void (synced.push(i.mode), syncedAt.push(performance.now())) });
  t.after(() => proxy.close());
  await proxy.synced;
  const cur = await api.get(ENDPOINTSLICES, 'web-abcde', { namespace: 'default' });
  await api.resource(ENDPOINTSLICES, 'default').update({ ...slice('web', [{ ip: '10.244.0.12' }]), metadata: { ...slice('web', []).metadata, resourceVersion: cur.metadata.resourceVersion } });
  await pollUntil('the partial sync', () => synced.length === 2, { timeoutMs: 2000, intervalMs: 5 });
  const flushed = fake.applied.at(-1)!;
  assert.match(flushed, /^flush chain ip nodelet-proxy endpoint-\S+__10\.244\.0\.11\/8080$/m);
  // The grace period runs from the sync that left the chain stale, not from when the poll saw it
  // (on a loaded machine that can be hundreds of ms later).
  const t0 = syncedAt[1]!;
  await pollUntil('the stale chain deleted', () => fake.applied.at(-1)!.includes('delete chain'), { timeoutMs: 3000, intervalMs: 10 });
  assert.ok(performance.now() - t0 >= 500, 'not before the grace period');
  assert.match(fake.applied.at(-1)!, /^add chain ip nodelet-proxy (endpoint-\S+__10\.244\.0\.11\/8080)\ndelete chain ip nodelet-proxy \1\n$/);
  assert.deepEqual(synced, ['full', 'partial'], 'the deletion is not a sync');
});

test('close keeps the table by default and deletes it with cleanupOnShutdown', async (t) => {
  const keep = new FakeNft();
  const a = await setup(t, keep);
  await a.proxy.synced;
  await a.proxy.close();
  assert.ok(!keep.applied.at(-1)!.endsWith('delete table ip nodelet-proxy\n'));
  const del = new FakeNft();
  const b = await setup(t, del, { cleanupOnShutdown: true });
  await b.proxy.synced;
  await b.proxy.close();
  assert.equal(del.applied.at(-1), 'table ip nodelet-proxy\ndelete table ip nodelet-proxy\n');
});

test('shared informers: the proxy reads the ones it is given, makes no watches of its own and leaves them open', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const api = server.client();
  await api.resource(SERVICES, 'default').create(service('web', '10.96.0.5'));
  const informers = {
    services: new Informer({ client: api, resource: SERVICES }),
    endpointSlices: new Informer({ client: api, resource: ENDPOINTSLICES }),
    node: new Informer({ client: api, resource: NODES, fieldSelector: 'metadata.name=n1' }),
    nodes: new Informer({ client: api, resource: NODES }),
  };
  t.after(() => Promise.all(Object.values(informers).map((i) => i.close())));
  const fake = new FakeNft();
  const proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({ minSyncPeriod: '10ms' }), log: noopLogger, registry: new Registry(), runner: fake, informers });
  await proxy.synced;
  assert.match(fake.applied.at(-1)!, /10\.96\.0\.5/);
  const lists = (path: string) => server.requests.filter((r) => r.method === 'GET' && r.path.endsWith(path) && r.query.get('watch') !== 'true').length;
  assert.deepEqual([lists('/services'), lists('/endpointslices'), lists('/nodes')], [1, 1, 2], 'one list per shared informer, none of the proxy’s own');
  await proxy.close();
  await api.resource(SERVICES, 'default').create(service('db', '10.96.0.6'));
  await pollUntil('the shared Services informer still watching after the proxy closed', () => informers.services.get('default/db'), { timeoutMs: 2000, intervalMs: 5 });
});
