/**
 * `GET /metrics/resource`: kubelet's resource metrics (pkg/kubelet/metrics/collectors/
 * resource_metrics.go, v1.32) in the Prometheus text format 0.0.4, rendered from a Summary.
 * This is what metrics-server scrapes; it computes CPU rates from the counters and their
 * timestamps, so every sample carries the time it was measured (milliseconds), as kubelet's
 * NewLazyMetricWithTimestamp writes it. Names, help texts, stability prefixes and label order
 * are kubelet's:
 *
 *   node_cpu_usage_seconds_total                       counter  seconds of CPU since boot
 *   node_memory_working_set_bytes                      gauge
 *   node_swap_usage_bytes                              gauge    (ALPHA)
 *   container_start_time_seconds{container,namespace,pod}    gauge    no timestamp, as kubelet
 *   container_cpu_usage_seconds_total{container,namespace,pod}
 *   container_memory_working_set_bytes{container,namespace,pod}
 *   pod_cpu_usage_seconds_total{namespace,pod}
 *   pod_memory_working_set_bytes{namespace,pod}
 *   resource_scrape_error                              gauge    0, or 1 when no Summary could be made
 *
 * `scrape_error`, deprecated in 1.29, is hidden by kubelet 1.32 and not written here either.
 * Numbers are formatted as Go's strconv.FormatFloat(v, 'g', -1, 64) does (`1.6461824e+07`).
 */
import type { ContainerStats, PodStats, Summary } from './types.js';

export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A float as the Prometheus Go client writes it: strconv.AppendFloat(v, 'g', -1, 64), the
 * shortest digits, in exponent form when the decimal exponent is below -4 or at least 6
 * (`1e+06`, `1.6461824e+07`, `357.35491`).
 */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  // toExponential() without digits gives the shortest round-trip mantissa, like Go's shortest mode.
  const [mantissa, expStr] = v.toExponential().split('e');
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const e = Math.abs(exp);
    return `${mantissa}e${sign}${e < 10 ? '0' : ''}${e}`;
  }
  return String(v);
}

const escape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: Array<{ key: string; line: string }>;
}

function family(name: string, type: Family['type'], stability: 'STABLE' | 'ALPHA', help: string): Family {
  return { name, type, help: `[${stability}] ${help}`, samples: [] };
}

function sample(f: Family, labels: Array<[string, string]>, value: number, time?: string): void {
  const l = labels.length ? `{${labels.map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}` : '';
  const ts = time ? ` ${Date.parse(time)}` : '';
  f.samples.push({ key: labels.map(([, v]) => v).join('\u0000'), line: `${f.name}${l} ${goFloat(value)}${ts}` });
}

const containerLabels = (p: PodStats, c: ContainerStats): Array<[string, string]> => [['container', c.name], ['namespace', p.podRef.namespace], ['pod', p.podRef.name]];
const podLabels = (p: PodStats): Array<[string, string]> => [['namespace', p.podRef.namespace], ['pod', p.podRef.name]];

/** The exposition of `summary`; with no summary (it could not be made) only `resource_scrape_error 1`. */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const nodeCpu = family('node_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the node in core-seconds');
  const nodeMem = family('node_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the node in bytes');
  const nodeSwap = family('node_swap_usage_bytes', 'gauge', 'ALPHA', 'Current swap usage of the node in bytes. Reported only on non-windows systems');
  const start = family('container_start_time_seconds', 'gauge', 'STABLE', 'Start time of the container since unix epoch in seconds');
  const cCpu = family('container_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the container in core-seconds');
  const cMem = family('container_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the container in bytes');
  const pCpu = family('pod_cpu_usage_seconds_total', 'counter', 'STABLE', 'Cumulative cpu time consumed by the pod in core-seconds');
  const pMem = family('pod_memory_working_set_bytes', 'gauge', 'STABLE', 'Current working set of the pod in bytes');
  const scrapeError = family('resource_scrape_error', 'gauge', 'STABLE', '1 if there was an error while getting container metrics, 0 otherwise');
  if (summary) {
    const n = summary.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined) sample(nodeCpu, [], n.cpu.usageCoreNanoSeconds / 1e9, n.cpu.time);
    if (n.memory?.workingSetBytes !== undefined) sample(nodeMem, [], n.memory.workingSetBytes, n.memory.time);
    if (n.swap?.swapUsageBytes !== undefined && n.memory) sample(nodeSwap, [], n.swap.swapUsageBytes, n.memory.time);
    for (const p of summary.pods) {
      for (const c of p.containers) {
        const startMs = Date.parse(c.startTime);
        if (startMs > 0) sample(start, containerLabels(p, c), startMs / 1000);
        if (c.cpu?.usageCoreNanoSeconds !== undefined) sample(cCpu, containerLabels(p, c), c.cpu.usageCoreNanoSeconds / 1e9, c.cpu.time);
        if (c.memory?.workingSetBytes !== undefined) sample(cMem, containerLabels(p, c), c.memory.workingSetBytes, c.memory.time);
      }
      if (p.cpu?.usageCoreNanoSeconds !== undefined) sample(pCpu, podLabels(p), p.cpu.usageCoreNanoSeconds / 1e9, p.cpu.time);
      if (p.memory?.workingSetBytes !== undefined) sample(pMem, podLabels(p), p.memory.workingSetBytes, p.memory.time);
    }
  }
  sample(scrapeError, [], summary ? 0 : 1);
  // Families in name order, samples in label order (labels themselves sorted by name), empty
  // families left out: what the Go registry's gatherer writes.
  const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const families = [cCpu, cMem, start, nodeCpu, nodeMem, nodeSwap, pCpu, pMem, scrapeError].filter((f) => f.samples.length);
  families.sort((a, b) => byKey({ key: a.name }, { key: b.name }));
  return families.map((f) => `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} ${f.type}\n${f.samples.sort(byKey).map((s) => s.line).join('\n')}\n`).join('');
}
