import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderCadvisorMetrics, type RuntimeIds } from './cadvisor-metrics.js';
import { renderResourceMetrics } from './resource-metrics.js';
import type { Summary } from './types.js';

const T = '2023-11-14T22:13:20.500Z';
const SUMMARY: Summary = {
  node: { nodeName: 'n1', startTime: T },
  pods: [{
    podRef: { name: 'web', namespace: 'ns', uid: 'u1' }, startTime: T,
    containers: [
      { name: 'app', startTime: T, cpu: { time: T, usageCoreNanoSeconds: 2.5e9 }, memory: { time: T, workingSetBytes: 1024, rssBytes: 512, usageBytes: 2048 } },
      { name: 'gone', startTime: T, cpu: { time: T, usageCoreNanoSeconds: 1 } },
    ],
    cpu: { time: T, usageCoreNanoSeconds: 3e9 },
    network: { time: T, name: 'eth0', rxBytes: 100, txBytes: 200, interfaces: [{ name: 'eth0', rxBytes: 100, txBytes: 200 }] },
  }],
};
const IDS: RuntimeIds = {
  container: (uid, name) => (uid === 'u1' && name === 'app' ? { id: 'c0ffee', image: 'docker.io/library/nginx:1' } : undefined),
  sandbox: (uid) => (uid === 'u1' ? { id: 'sb1' } : undefined),
  podCgroup: () => '/kubepods/burstable/podu1',
};

test('/metrics/cadvisor: cadvisor names and labels, container and pod rows, network per interface', () => {
  const text = renderCadvisorMetrics(SUMMARY, IDS);
  const ts = Date.parse(T);
  assert.ok(text.includes('# TYPE container_cpu_usage_seconds_total counter\n'));
  assert.ok(text.includes(`container_cpu_usage_seconds_total{container="app",cpu="total",id="/kubepods/burstable/podu1/c0ffee",image="docker.io/library/nginx:1",name="c0ffee",namespace="ns",pod="web"} 2.5 ${ts}\n`), text);
  assert.ok(text.includes(`container_cpu_usage_seconds_total{container="",cpu="total",id="/kubepods/burstable/podu1",image="",name="",namespace="ns",pod="web"} 3 ${ts}\n`), text);
  assert.ok(text.includes(`container_memory_working_set_bytes{container="app",id="/kubepods/burstable/podu1/c0ffee",image="docker.io/library/nginx:1",name="c0ffee",namespace="ns",pod="web"} 1024 ${ts}\n`));
  assert.ok(text.includes(`container_memory_rss{container="app",`));
  assert.ok(text.includes(`container_network_receive_bytes_total{container="",id="/kubepods/burstable/podu1",image="",interface="eth0",name="sb1",namespace="ns",pod="web"} 100 ${ts}\n`), text);
  assert.ok(text.includes(`container_network_transmit_bytes_total{container="",id="/kubepods/burstable/podu1",image="",interface="eth0",name="sb1",namespace="ns",pod="web"} 200 ${ts}\n`));
  assert.ok(!text.includes('container="gone"'), 'a container the runtime no longer has is left out');
  assert.equal(renderCadvisorMetrics(undefined, IDS), '');
});

test('/metrics/cadvisor and /metrics/resource give the same CPU counter for a container', () => {
  const pick = (text: string, re: RegExp): number => Number(re.exec(text)?.[1]);
  const cad = pick(renderCadvisorMetrics(SUMMARY, IDS), /^container_cpu_usage_seconds_total\{container="app"[^}]*\} (\S+)/m);
  const res = pick(renderResourceMetrics(SUMMARY), /^container_cpu_usage_seconds_total\{container="app"[^}]*\} (\S+)/m);
  assert.equal(cad, 2.5);
  assert.equal(cad, res);
});
