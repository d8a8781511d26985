import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { noopLogger } from '@nodelet/base';
import { serveStats, type StatsSource } from './stats-routes.js';
import type { Summary } from '../stats/types.js';

const SUMMARY: Summary = {
  node: {
    nodeName: 'n1', startTime: '2023-11-03T08:26:40.000Z',
    cpu: { time: '2023-11-14T22:13:20.750Z', usageNanoCores: 5e8, usageCoreNanoSeconds: 9e9 },
    memory: { time: '2023-11-14T22:13:20.750Z', workingSetBytes: 1000 },
    fs: { time: '2023-11-14T22:13:20.750Z', usedBytes: 1 },
  },
  pods: [{
    podRef: { name: 'p', namespace: 'ns', uid: 'u' }, startTime: '2023-11-14T22:00:00.999Z',
    containers: [{ name: 'c', startTime: '2023-11-14T22:00:01.000Z', cpu: { time: '2023-11-14T22:13:20.500Z', usageCoreNanoSeconds: 1e9 }, logs: { time: '2023-11-14T22:13:20.500Z', usedBytes: 5 } }],
    cpu: { time: '2023-11-14T22:13:20.500Z', usageCoreNanoSeconds: 1e9 },
    volume: [{ name: 'v', time: '2023-11-14T22:13:20.500Z', usedBytes: 3 }],
  }],
};

describe('node API stats routes', () => {
  let source: StatsSource = { summary: async () => SUMMARY };
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => void serveStats(new URL(req.url!, 'http://x'), source, res, noopLogger));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('/stats/summary: the Summary with whole-second times, as kubelet writes metav1.Time', async () => {
    const res = await fetch(`${base}/stats/summary`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as Summary;
    assert.equal(body.node.cpu?.time, '2023-11-14T22:13:20Z');
    assert.equal(body.pods[0]!.startTime, '2023-11-14T22:00:00Z');
    assert.equal(body.pods[0]!.containers[0]!.logs?.usedBytes, 5);
    assert.equal(body.pods[0]!.volume?.[0]?.name, 'v');
  });

  it('/stats/summary?only_cpu_and_memory=true keeps CPU and memory only', async () => {
    const body = (await (await fetch(`${base}/stats/summary?only_cpu_and_memory=true`)).json()) as Summary;
    assert.equal(body.node.fs, undefined);
    assert.equal(body.node.cpu?.usageNanoCores, 5e8);
    assert.deepEqual(Object.keys(body.pods[0]!).sort(), ['containers', 'cpu', 'podRef', 'startTime']);
    assert.deepEqual(Object.keys(body.pods[0]!.containers[0]!).sort(), ['cpu', 'name', 'startTime']);
  });

  it('/metrics/resource: Prometheus text; a collector that fails gives resource_scrape_error 1, not an error status', async () => {
    let res = await fetch(`${base}/metrics/resource`);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(await res.text(), /^pod_cpu_usage_seconds_total\{namespace="ns",pod="p"\} 1 1700000000500$/m);
    source = { summary: async () => Promise.reject(new Error('runtime down')) };
    res = await fetch(`${base}/metrics/resource`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^resource_scrape_error 1$/m);
    res = await fetch(`${base}/stats/summary`);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /runtime down/);
  });
  it('/metrics/cadvisor: 404 without runtime IDs, the cadvisor text with them', async () => {
    source = { summary: async () => SUMMARY };
    assert.equal((await fetch(`${base}/metrics/cadvisor`)).status, 404);
    source = { summary: async () => SUMMARY, runtimeIds: { container: () => ({ id: 'cid', image: 'img' }), sandbox: () => undefined } };
    const res = await fetch(`${base}/metrics/cadvisor`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^container_cpu_usage_seconds_total\{container="c",cpu="total",id="cid",image="img",name="cid",namespace="ns",pod="p"\} 1 /m);
  });
});
