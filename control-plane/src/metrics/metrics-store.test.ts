import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricsStore } from './metrics-store.js';
import { decodeResourceMetrics } from './resource-scrape.js';

/** A node's /metrics/resource as the agent writes it (agent/src/stats/resource-metrics.ts). */
function exposition(t: number, o: { nodeCpu: number; burnCpu: number; burnStart?: number; sideCpu?: number }): string {
  return [
    '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
    '# TYPE container_cpu_usage_seconds_total counter',
    `container_cpu_usage_seconds_total{container="yes",namespace="default",pod="burn"} ${o.burnCpu} ${t}`,
    ...(o.sideCpu !== undefined ? [`container_cpu_usage_seconds_total{container="side",namespace="default",pod="burn"} ${o.sideCpu} ${t}`] : []),
    `container_memory_working_set_bytes{container="yes",namespace="default",pod="burn"} 1.048576e+06 ${t}`,
    ...(o.sideCpu !== undefined ? [`container_memory_working_set_bytes{container="side",namespace="default",pod="burn"} 4096 ${t}`] : []),
    `container_start_time_seconds{container="yes",namespace="default",pod="burn"} ${o.burnStart ?? 1700000000}`,
    `node_cpu_usage_seconds_total ${o.nodeCpu} ${t}`,
    `node_memory_working_set_bytes 5.36870912e+08 ${t}`,
    'resource_scrape_error 0',
    '',
  ].join('\n');
}

describe('resource scrape decoding', () => {
  it('keeps the node and container points with their sample times, escapes and all', () => {
    const s = decodeResourceMetrics(exposition(1_700_000_010_000, { nodeCpu: 100.5, burnCpu: 12.25 }) + 'container_cpu_usage_seconds_total{container="a\\"b",namespace="x",pod="p"} 1 5\ncontainer_memory_working_set_bytes{container="a\\"b",namespace="x",pod="p"} 2 5\n');
    assert.deepEqual(s.node, { timeMs: 1_700_000_010_000, cpuNs: 100_500_000_000, memoryBytes: 536_870_912 });
    assert.deepEqual(s.containers.get('default/burn/yes'), { namespace: 'default', pod: 'burn', container: 'yes', timeMs: 1_700_000_010_000, cpuNs: 12_250_000_000, memoryBytes: 1_048_576, startMs: 1_700_000_000_000 });
    assert.equal(s.containers.get('x/p/a"b')?.cpuNs, 1e9);
  });

  it('skips samples without a time, garbage lines and half-reported containers', () => {
    const s = decodeResourceMetrics('node_cpu_usage_seconds_total 5\nnode_memory_working_set_bytes 7 1\nnot a metric line\ncontainer_cpu_usage_seconds_total{container="c",namespace="n",pod="p"} 1 2\n');
    assert.equal(s.node, undefined);
    assert.equal(s.containers.size, 0);
  });
});

describe('metrics store', () => {
  it('gives rates from two samples, memory from the latest, and the window between them', () => {
    const m = new MetricsStore();
    m.store('n1', decodeResourceMetrics(exposition(1_000_000, { nodeCpu: 100, burnCpu: 10 })));
    assert.equal(m.node('n1'), undefined, 'one sample: no rate yet');
    assert.equal(m.pod('default', 'burn'), undefined);
    m.store('n1', decodeResourceMetrics(exposition(1_000_000, { nodeCpu: 100, burnCpu: 10 })));
    assert.equal(m.node('n1'), undefined, 'the same sample again is not a second one');
    m.store('n1', decodeResourceMetrics(exposition(1_010_000, { nodeCpu: 115, burnCpu: 19.5 })));
    assert.deepEqual(m.node('n1'), { timeMs: 1_010_000, windowMs: 10_000, cpuNanoCores: 1_500_000_000, memoryBytes: 536_870_912 });
    assert.deepEqual(m.pod('default', 'burn'), { timeMs: 1_010_000, windowMs: 10_000, containers: [{ name: 'yes', cpuNanoCores: 950_000_000, memoryBytes: 1_048_576 }] });
    // The next sample moves the window along.
    m.store('n1', decodeResourceMetrics(exposition(1_025_000, { nodeCpu: 130, burnCpu: 19.5 })));
    assert.deepEqual(m.pod('default', 'burn')?.containers[0]?.cpuNanoCores, 0);
    assert.equal(m.node('n1')?.windowMs, 15_000);
  });

  it('makes no rate across a restart or a counter that went down, and none for a partly reported pod', () => {
    const m = new MetricsStore();
    m.store('n1', decodeResourceMetrics(exposition(1_000_000, { nodeCpu: 100, burnCpu: 10 })));
    m.store('n1', decodeResourceMetrics(exposition(1_010_000, { nodeCpu: 90, burnCpu: 1, burnStart: 1_700_000_500 })));
    assert.equal(m.node('n1'), undefined);
    assert.equal(m.pod('default', 'burn'), undefined);
    // A second container appears: it has one sample, so the pod as a whole has no metrics yet.
    m.store('n1', decodeResourceMetrics(exposition(1_020_000, { nodeCpu: 95, burnCpu: 2, burnStart: 1_700_000_500, sideCpu: 1 })));
    assert.equal(m.pod('default', 'burn'), undefined);
    m.store('n1', decodeResourceMetrics(exposition(1_030_000, { nodeCpu: 96, burnCpu: 3, burnStart: 1_700_000_500, sideCpu: 1.5 })));
    assert.deepEqual(m.pod('default', 'burn')?.containers.map((c) => [c.name, c.cpuNanoCores, c.memoryBytes]), [['side', 50_000_000, 4096], ['yes', 100_000_000, 1_048_576]]);
  });

  it('forgets a node, and the pods on it', () => {
    const m = new MetricsStore();
    m.store('n1', decodeResourceMetrics(exposition(1_000_000, { nodeCpu: 100, burnCpu: 10 })));
    m.store('n1', decodeResourceMetrics(exposition(1_010_000, { nodeCpu: 101, burnCpu: 11 })));
    assert.ok(m.pod('default', 'burn'));
    m.forget('n1');
    assert.equal(m.node('n1'), undefined);
    assert.equal(m.pod('default', 'burn'), undefined);
    assert.deepEqual(m.nodeNames(), []);
  });
});
