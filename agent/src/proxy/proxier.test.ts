import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { pollUntil, noopLogger } from '@nodelet/base';
import { ENDPOINTSLICES, Informer, NODES, SERVICES } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ServiceProxy } from './proxier.js';
import { resolveProxyConfig } from './config.js';
import type { CommandRunner } from './exec.js';
import { service } from './testing/fixtures.js';

/** Plays nft: remembers the last script applied and lists a table whose rules can be tampered with. */
class FakeNft implements CommandRunner {
  readonly applied: string[] = [];
  readonly calls: string[] = [];
  exists: boolean;
  tamper = 0;

  constructor(exists = false) {
    this.exists = exists;
  }

  async run(argv: readonly string[], o: { input?: string }) {
    this.calls.push(argv.join(' '));
    if (argv[0] === 'nft' && argv[1] === '-f') {
      this.applied.push(o.input ?? '');
      this.exists = !(o.input ?? '').startsWith('table ip nodelet-proxy\ndelete table ip nodelet-proxy\n') || (o.input ?? '').includes('{');
      return { code: 0, stdout: '', stderr: '' };
    }
    if (argv[0] === 'nft' && argv.includes('list')) {
      if (!this.exists) return { code: 1, stdout: '', stderr: 'Error: No such file or directory' };
      const doc = { nftables: [{ table: { family: 'ip', name: 'nodelet-proxy', handle: 1 } }, { rule: { chain: 'services', expr: `${this.applied.length}/${this.tamper}` } }] };
      return { code: 0, stdout: JSON.stringify(doc), stderr: '' };
    }
    return { code: 0, stdout: '', stderr: '' };
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

test('drift: a changed live table is rewritten at once; an unchanged one is left alone', async (t) => {
  const fake = new FakeNft();
  const { proxy } = await setup(t, fake, { driftCheckPeriod: '20ms' });
  await proxy.synced;
  // list calls: start's existence check, the baseline after the first write, then drift checks.
  await pollUntil('the drift baseline', () => fake.calls.filter((c) => c.includes('list')).length >= 3, { timeoutMs: 2000, intervalMs: 5 });
  const writes = fake.applied.length;
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(fake.applied.length, writes, 'no rewrite while the table is as written');
  fake.tamper++;
  await pollUntil('a rewrite after the tampering', () => fake.applied.length > writes, { timeoutMs: 2000, intervalMs: 5 });
  assert.equal((await proxy.metrics.driftRepairs.get()).values[0]?.value, 1);
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
  };
  t.after(() => Promise.all(Object.values(informers).map((i) => i.close())));
  const fake = new FakeNft();
  const proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({ minSyncPeriod: '10ms' }), log: noopLogger, registry: new Registry(), runner: fake, informers });
  await proxy.synced;
  assert.match(fake.applied.at(-1)!, /10\.96\.0\.5/);
  const lists = (path: string) => server.requests.filter((r) => r.method === 'GET' && r.path.endsWith(path) && r.query.get('watch') !== 'true').length;
  assert.deepEqual([lists('/services'), lists('/endpointslices'), lists('/nodes')], [1, 1, 1], 'one list per shared informer, none of the proxy’s own');
  await proxy.close();
  await api.resource(SERVICES, 'default').create(service('db', '10.96.0.6'));
  await pollUntil('the shared Services informer still watching after the proxy closed', () => informers.services.get('default/db'), { timeoutMs: 2000, intervalMs: 5 });
});
