/**
 * The node API's resource endpoints, served from the stats collector's latest round
 * (agent/src/stats/collector.ts) without calling the runtime:
 *
 *   GET /stats/summary[?only_cpu_and_memory=true]   kubelet's Summary API JSON (stats/v1alpha1)
 *   GET /metrics/resource                           kubelet's resource metrics, Prometheus text
 *   GET /metrics/cadvisor                           cadvisor's per-container series (cadvisor-metrics.ts)
 *
 * Both are authorized by node-api.ts like the rest (SubjectAccessReview for `nodes/stats` and
 * `nodes/metrics`). Summary times are written with whole seconds, as kubelet's metav1.Time is;
 * the resource metrics keep milliseconds in their sample timestamps.
 */
import type http from 'node:http';
import { describeError, type Logger } from '@nodelet/base';
import { renderResourceMetrics, RESOURCE_METRICS_CONTENT_TYPE } from '../stats/resource-metrics.js';
import { CADVISOR_METRICS_CONTENT_TYPE, renderCadvisorMetrics, type RuntimeIds } from '../stats/cadvisor-metrics.js';
import type { ContainerStats, CpuStats, MemoryStats, Summary } from '../stats/types.js';

/** Where the routes get their numbers (the collector). */
export interface StatsSource {
  summary(signal?: AbortSignal): Promise<Summary>;
  /** Container and sandbox IDs for /metrics/cadvisor's labels; without it that path is 404. */
  runtimeIds?: RuntimeIds;
}

export const STATS_PATHS = new Set(['/stats/summary', '/stats/summary/', '/metrics/resource', '/metrics/cadvisor']);

/** RFC 3339 with whole seconds (`2024-05-01T10:00:00Z`), as Go's time.RFC3339 layout writes UTC. */
function toSeconds(t: string): string {
  return t.replace(/\.\d+Z$/, 'Z');
}

/** kubelet's `only_cpu_and_memory`: node, system containers, pods and containers reduced to CPU and memory. */
function cpuAndMemoryOnly(s: Summary): Summary {
  const cm = (o: { cpu?: CpuStats; memory?: MemoryStats }): { cpu?: CpuStats; memory?: MemoryStats } => ({
    ...(o.cpu ? { cpu: o.cpu } : {}),
    ...(o.memory ? { memory: o.memory } : {}),
  });
  const container = (c: ContainerStats): ContainerStats => ({ name: c.name, startTime: c.startTime, ...cm(c) });
  return {
    node: { nodeName: s.node.nodeName, systemContainers: s.node.systemContainers?.map(container), startTime: s.node.startTime, ...cm(s.node) },
    pods: s.pods.map((p) => ({ podRef: p.podRef, startTime: p.startTime, containers: p.containers.map(container), ...cm(p) })),
  };
}

function write(res: http.ServerResponse, code: number, body: string, type: string): void {
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers one of {@link STATS_PATHS}. */
export async function serveStats(url: URL, source: StatsSource, res: http.ServerResponse, log: Logger): Promise<void> {
  let summary: Summary | undefined;
  let failure: unknown;
  try {
    summary = await source.summary();
  } catch (err) {
    failure = err;
    log.warn({ err: describeError(err) }, 'Resource stats unavailable');
  }
  if (url.pathname === '/metrics/cadvisor') {
    if (!source.runtimeIds) return write(res, 404, 'Not Found\n', 'text/plain; charset=utf-8');
    return write(res, 200, renderCadvisorMetrics(summary, source.runtimeIds), CADVISOR_METRICS_CONTENT_TYPE);
  }
  if (url.pathname === '/metrics/resource') return write(res, 200, renderResourceMetrics(summary), RESOURCE_METRICS_CONTENT_TYPE);
  if (!summary) return write(res, 500, `Internal Error: failed to get summary stats: ${describeError(failure)}\n`, 'text/plain; charset=utf-8');
  const only = url.searchParams.get('only_cpu_and_memory') === 'true';
  const body = JSON.stringify(only ? cpuAndMemoryOnly(summary) : summary, (k, v: unknown) =>
    (k === 'time' || k === 'startTime') && typeof v === 'string' ? toSeconds(v) : v);
  write(res, 200, body, 'application/json');
}
