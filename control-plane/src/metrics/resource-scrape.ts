/**
 * Decodes a node's `/metrics/resource` (kubelet's resource metrics in the Prometheus text format,
 * agent/src/stats/resource-metrics.ts) into the points metrics-server keeps: the node's cumulative
 * CPU and working set, and each container's, every one with the time it was measured.
 *
 * Only the families metrics-server reads are kept; a sample without a timestamp (or a family not
 * listed) is ignored, as metrics-server's decoder does: without the time of the measurement no rate
 * can be computed from it.
 */

/** One measurement: cumulative CPU in core-nanoseconds and working set in bytes, at `timeMs`. */
export interface ResourcePoint {
  timeMs: number;
  cpuNs: number;
  memoryBytes: number;
  /** When the container started (epoch ms); a different start means a restart and no rate. */
  startMs?: number;
}

export interface NodeScrape {
  node?: ResourcePoint;
  /** Keyed by `namespace/pod/container` ({@link containerKey}). */
  containers: Map<string, ResourcePoint & { namespace: string; pod: string; container: string }>;
}

export const containerKey = (namespace: string, pod: string, container: string): string => `${namespace}/${pod}/${container}`;

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const m of text.matchAll(LABEL)) out[m[1]!] = m[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
  return out;
}

/** The points in one scrape; unparseable lines are skipped (a half-understood scrape still serves the rest). */
export function decodeResourceMetrics(text: string): NodeScrape {
  const node: Partial<ResourcePoint> & { cpuAt?: number; memAt?: number } = {};
  const partial = new Map<string, { namespace: string; pod: string; container: string; cpuNs?: number; cpuAt?: number; memoryBytes?: number; memAt?: number; startMs?: number }>();
  const entry = (l: Record<string, string>) => {
    const key = containerKey(l.namespace ?? '', l.pod ?? '', l.container ?? '');
    let e = partial.get(key);
    if (!e) partial.set(key, (e = { namespace: l.namespace ?? '', pod: l.pod ?? '', container: l.container ?? '' }));
    return e;
  };
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const [, name, labelText, valueText, tsText] = m;
    const value = Number(valueText);
    if (!Number.isFinite(value)) continue;
    const ts = tsText === undefined ? undefined : Number(tsText);
    switch (name) {
      case 'node_cpu_usage_seconds_total':
        if (ts !== undefined) Object.assign(node, { cpuNs: Math.round(value * 1e9), cpuAt: ts });
        break;
      case 'node_memory_working_set_bytes':
        if (ts !== undefined) Object.assign(node, { memoryBytes: value, memAt: ts });
        break;
      case 'container_cpu_usage_seconds_total':
        if (ts !== undefined) Object.assign(entry(labelsOf(labelText)), { cpuNs: Math.round(value * 1e9), cpuAt: ts });
        break;
      case 'container_memory_working_set_bytes':
        if (ts !== undefined) Object.assign(entry(labelsOf(labelText)), { memoryBytes: value, memAt: ts });
        break;
      case 'container_start_time_seconds':
        entry(labelsOf(labelText)).startMs = Math.round(value * 1000);
        break;
    }
  }
  const out: NodeScrape = { containers: new Map() };
  // The CPU sample's time is the point's time: the rate is computed between two of them.
  if (node.cpuNs !== undefined && node.cpuAt !== undefined && node.memoryBytes !== undefined) {
    out.node = { timeMs: node.cpuAt, cpuNs: node.cpuNs, memoryBytes: node.memoryBytes };
  }
  for (const [key, e] of partial) {
    if (e.cpuNs === undefined || e.cpuAt === undefined || e.memoryBytes === undefined || !e.pod || !e.container) continue;
    out.containers.set(key, { namespace: e.namespace, pod: e.pod, container: e.container, timeMs: e.cpuAt, cpuNs: e.cpuNs, memoryBytes: e.memoryBytes, startMs: e.startMs });
  }
  return out;
}
