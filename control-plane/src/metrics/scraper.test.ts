// The scraper against a stand-in agent (TLS on loopback, cluster-signed serving certificate): the
// path, the bearer token, verification against the agent CA, and what a failed node leaves behind.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ApiClient, Node } from '@nodelet/api';
import { systemClock } from '@nodelet/base';
import { RecordingLogger } from '@nodelet/base/testing';
import { createCa, issueCertificate, loadCa } from '../pki/certs.js';
import { MetricsStore } from './metrics-store.js';
import { agentAddress, MetricsScraper } from './scraper.js';

describe('metrics scraper', () => {
  let agent: https.Server;
  let port: number;
  let caPem: string;
  let otherCaPem: string;
  const seen: Array<{ path?: string; auth?: string }> = [];
  let t = 1_000_000;
  let status = 200;

  before(async () => {
    const ca = await createCa('test-ca');
    caPem = ca.certPem;
    otherCaPem = (await createCa('other-ca')).certPem;
    const serving = await issueCertificate(await loadCa(ca), { commonName: 'n1', usage: 'server', ips: ['127.0.0.1'] });
    agent = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      seen.push({ path: req.url, auth: req.headers.authorization });
      t += 10_000;
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(status === 200 ? `node_cpu_usage_seconds_total ${t / 1000} ${t}\nnode_memory_working_set_bytes 1024 ${t}\n` : 'Forbidden (user=x, verb=get, resource=nodes, subresource=metrics)');
    });
    await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
    port = (agent.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => agent.close(() => resolve())));

  const node = (): Node => ({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } });
  const scraper = (store: MetricsStore, log: RecordingLogger, ca = caPem): MetricsScraper =>
    new MetricsScraper({ client: { list: async () => ({ items: [node()], metadata: {} }) } as unknown as ApiClient, token: 'metrics-token', agentCa: () => ca, store, clock: systemClock, log });

  it('picks the InternalIP and the advertised port', () => {
    assert.deepEqual(agentAddress(node()), { host: '127.0.0.1', port });
    assert.deepEqual(agentAddress({ metadata: { name: 'x' }, status: { addresses: [{ type: 'Hostname', address: 'x' }] } }), { host: 'x', port: 10250 });
    assert.equal(agentAddress({ metadata: { name: 'y' } }), undefined);
  });

  it('scrapes /metrics/resource with its token, verifying the agent, and computes node usage', async () => {
    const store = new MetricsStore();
    const s = scraper(store, new RecordingLogger());
    await s.scrapeAll(AbortSignal.timeout(5000));
    await s.scrapeAll(AbortSignal.timeout(5000));
    assert.deepEqual(seen.slice(-2), [{ path: '/metrics/resource', auth: 'Bearer metrics-token' }, { path: '/metrics/resource', auth: 'Bearer metrics-token' }]);
    assert.deepEqual(store.node('n1'), { timeMs: t, windowMs: 10_000, cpuNanoCores: 1_000_000_000, memoryBytes: 1024 });
  });

  it('forgets a node whose scrape is refused or whose certificate does not verify, and says why', async () => {
    const store = new MetricsStore();
    const log = new RecordingLogger();
    await scraper(store, log).scrapeAll(AbortSignal.timeout(5000));
    await scraper(store, log).scrapeAll(AbortSignal.timeout(5000));
    assert.ok(store.node('n1'));
    status = 403;
    await scraper(store, log).scrapeAll(AbortSignal.timeout(5000));
    status = 200;
    assert.equal(store.node('n1'), undefined);
    assert.match(String(log.find(/Node metrics scrape failed/)[0]?.fields.err), /HTTP 403/);
    const before = seen.length;
    await scraper(store, log, otherCaPem).scrapeAll(AbortSignal.timeout(5000));
    assert.equal(seen.length, before, 'no request reaches an agent that does not verify');
    assert.deepEqual(store.nodeNames(), []);
  });
});
