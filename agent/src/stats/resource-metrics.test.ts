import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goFloat, renderResourceMetrics } from './resource-metrics.js';
import type { Summary } from './types.js';

describe('resource metrics (/metrics/resource)', () => {
  it('formats numbers as the Prometheus Go client does', () => {
    const cases: Array<[number, string]> = [
      [0, '0'], [1, '1'], [-1, '-1'], [357.35491, '357.35491'], [123456, '123456'], [1e6, '1e+06'],
      [16461824, '1.6461824e+07'], [1700000000.5, '1.7000000005e+09'], [0.0001, '0.0001'], [0.00001234, '1.234e-05'],
      [1e21, '1e+21'], [1.5e-10, '1.5e-10'], [NaN, 'NaN'], [Infinity, '+Inf'], [-Infinity, '-Inf'],
    ];
    for (const [v, want] of cases) assert.equal(goFloat(v), want, String(v));
  });

  it('writes kubelet 1.32 names, help, types, sorted labels and millisecond timestamps', () => {
    const summary: Summary = {
      node: {
        nodeName: 'n1', startTime: '2023-11-03T08:26:40.000Z',
        cpu: { time: '2023-11-14T22:13:20.123Z', usageCoreNanoSeconds: 357_354_910_000 },
        memory: { time: '2023-11-14T22:13:20.123Z', workingSetBytes: 16461824 },
      },
      pods: [
        {
          podRef: { name: 'web', namespace: 'default', uid: 'u1' }, startTime: '2023-11-14T22:00:00.000Z',
          cpu: { time: '2023-11-14T22:13:20.500Z', usageCoreNanoSeconds: 2_500_000_000 },
          memory: { time: '2023-11-14T22:13:20.500Z', workingSetBytes: 1_000_000 },
          containers: [
            { name: 'b', startTime: '2023-11-14T22:00:01.250Z', cpu: { time: '2023-11-14T22:13:20.500Z', usageCoreNanoSeconds: 2_000_000_000 }, memory: { time: '2023-11-14T22:13:20.500Z', workingSetBytes: 600_000 } },
            { name: 'a', startTime: '2023-11-14T22:00:01.000Z', cpu: { time: '2023-11-14T22:13:20.500Z', usageCoreNanoSeconds: 500_000_000 } },
          ],
        },
      ],
    };
    assert.equal(renderResourceMetrics(summary), [
      '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
      '# TYPE container_cpu_usage_seconds_total counter',
      'container_cpu_usage_seconds_total{container="a",namespace="default",pod="web"} 0.5 1700000000500',
      'container_cpu_usage_seconds_total{container="b",namespace="default",pod="web"} 2 1700000000500',
      '# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes',
      '# TYPE container_memory_working_set_bytes gauge',
      'container_memory_working_set_bytes{container="b",namespace="default",pod="web"} 600000 1700000000500',
      '# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds',
      '# TYPE container_start_time_seconds gauge',
      'container_start_time_seconds{container="a",namespace="default",pod="web"} 1.699999201e+09',
      'container_start_time_seconds{container="b",namespace="default",pod="web"} 1.69999920125e+09',
      '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
      '# TYPE node_cpu_usage_seconds_total counter',
      'node_cpu_usage_seconds_total 357.35491 1700000000123',
      '# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes',
      '# TYPE node_memory_working_set_bytes gauge',
      'node_memory_working_set_bytes 1.6461824e+07 1700000000123',
      '# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds',
      '# TYPE pod_cpu_usage_seconds_total counter',
      'pod_cpu_usage_seconds_total{namespace="default",pod="web"} 2.5 1700000000500',
      '# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes',
      '# TYPE pod_memory_working_set_bytes gauge',
      'pod_memory_working_set_bytes{namespace="default",pod="web"} 1e+06 1700000000500',
      '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
      '# TYPE resource_scrape_error gauge',
      'resource_scrape_error 0',
      '',
    ].join('\n'));
  });

  it('reports a scrape error when there is no summary', () => {
    assert.match(renderResourceMetrics(undefined), /^# HELP resource_scrape_error .*\n# TYPE resource_scrape_error gauge\nresource_scrape_error 1\n$/);
  });
});
