/**
 * `metrics.k8s.io/v1beta1`: NodeMetrics and PodMetrics as metrics-server serves them, read from the
 * control plane's scraper (metrics/scraper.ts) through a {@link MetricsSource}. The group is in
 * discovery only when the server has a source, as an aggregated API is only while available.
 *
 *   GET /apis/metrics.k8s.io/v1beta1/nodes[/<name>]                       authorized list|get nodes.metrics.k8s.io
 *   GET /apis/metrics.k8s.io/v1beta1/pods                                 every namespace
 *   GET /apis/metrics.k8s.io/v1beta1/namespaces/<ns>/pods[/<name>]
 *
 * Lists take `labelSelector` and `fieldSelector` (metadata.name, metadata.namespace), matched
 * against the Node and Pod objects, whose labels the metrics carry; objects without metrics yet
 * are left out of a list and NotFound on a get (`nodemetrics.metrics.k8s.io "<name>" not found`,
 * `podmetrics.metrics.k8s.io "<ns>/<name>" not found`, metrics-server's messages). Quantities are
 * canonical: CPU from nanocores (`123456789n`, `250m`), memory in BinarySI (`51200Ki`); the
 * window is a Go duration. Only GET: watch is not served (405), as metrics-server.
 */
import { formatQuantity, queryBool, rfc3339 } from '@nodelet/api';
import type { PodUsage, Usage } from '../metrics/metrics-store.js';
import type { RequestAttributes, UserInfo } from './auth/types.js';
import type { ServerContext } from './context.js';
import { compileFilter } from './filter.js';
import type { ApiObject } from './object.js';
import type { ResourceDef } from './resource.js';
import { sendJson } from './respond.js';
import { badRequest, methodNotAllowed, notFound, StatusError } from './status.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
const API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;
const PREFIX = `/apis/${METRICS_GROUP}/${METRICS_VERSION}/`;

/** What the scraper knows; `undefined` until a node or container has two samples. */
export interface MetricsSource {
  node(name: string): Usage | undefined;
  pod(namespace: string, name: string): PodUsage | undefined;
}

/** The group's two resources, for discovery (never stored: served only by this file). */
export const METRICS_DEFS: readonly ResourceDef[] = [
  { group: METRICS_GROUP, version: METRICS_VERSION, kind: 'NodeMetrics', plural: 'nodes', singular: 'node', namespaced: false, statusSubresource: false, subresources: [], strategy: {}, verbs: ['get', 'list'] },
  { group: METRICS_GROUP, version: METRICS_VERSION, kind: 'PodMetrics', plural: 'pods', singular: 'pod', namespaced: true, statusSubresource: false, subresources: [], strategy: {}, verbs: ['get', 'list'] },
];

export interface MetricsRequest {
  resource: 'nodes' | 'pods';
  namespace?: string;
  name?: string;
}

/** The request a path under the group names; undefined for other paths, 404 for an unknown one in the group. */
export function parseMetricsPath(pathname: string): MetricsRequest | undefined {
  if (!pathname.startsWith(PREFIX)) return undefined;
  let segs: string[];
  try {
    segs = pathname.slice(PREFIX.length).split('/').map((s) => decodeURIComponent(s));
  } catch {
    throw badRequest(`malformed percent-encoding in path "${pathname.slice(0, 100)}"`);
  }
  if (segs[segs.length - 1] === '') segs.pop();
  const [a, b, c, d, ...rest] = segs;
  if (rest.length === 0 && a === 'nodes' && c === undefined) return { resource: 'nodes', name: b };
  if (a === 'pods' && b === undefined) return { resource: 'pods' };
  if (rest.length === 0 && a === 'namespaces' && b && c === 'pods') return { resource: 'pods', namespace: b, name: d };
  throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** Go's time.Duration.String() of whole milliseconds (`15s`, `1m0.5s`, `500ms`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = ((ms % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

const usage = (cpuNanoCores: number, memoryBytes: number): Record<string, string> => ({
  cpu: formatQuantity(cpuNanoCores / 1e9),
  memory: formatQuantity(memoryBytes, 'BinarySI'),
});

function nodeMetrics(node: ApiObject, u: Usage, now: number): Record<string, unknown> {
  const labels = node.metadata.labels;
  return {
    kind: 'NodeMetrics', apiVersion: API_VERSION,
    metadata: { name: node.metadata.name, creationTimestamp: rfc3339(now), ...(labels ? { labels } : {}) },
    timestamp: rfc3339(u.timeMs), window: goDuration(u.windowMs), usage: usage(u.cpuNanoCores, u.memoryBytes),
  };
}

function podMetrics(pod: ApiObject, u: PodUsage, now: number): Record<string, unknown> {
  const labels = pod.metadata.labels;
  return {
    kind: 'PodMetrics', apiVersion: API_VERSION,
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, creationTimestamp: rfc3339(now), ...(labels ? { labels } : {}) },
    timestamp: rfc3339(u.timeMs), window: goDuration(u.windowMs),
    containers: u.containers.map((c) => ({ name: c.name, usage: usage(c.cpuNanoCores, c.memoryBytes) })),
  };
}

/**
 * Authorizes and answers one request of the group. `authorize` throws a 403 when the user may
 * not; the attributes are the group's (`nodes`/`pods` of metrics.k8s.io), as the aggregator passes them.
 */
export async function serveMetrics(
  ctx: ServerContext,
  source: MetricsSource,
  r: MetricsRequest,
  req: { method?: string; url: URL; user: UserInfo },
  authorize: (user: UserInfo, a: RequestAttributes) => Promise<void>,
  res: Parameters<typeof sendJson>[0],
): Promise<void> {
  const q = req.url.searchParams;
  const watch = queryBool(q, 'watch');
  const verb = r.name ? 'get' : watch ? 'watch' : 'list';
  await authorize(req.user, { verb, group: METRICS_GROUP, resource: r.resource, namespace: r.namespace, name: r.name });
  if ((req.method !== 'GET' && req.method !== 'HEAD') || watch) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const now = ctx.now();
  const core = ctx.resource('', 'v1', r.resource)!;
  if (r.name) {
    const obj = await core.registry.find(r.namespace, r.name);
    const u = obj ? (r.resource === 'nodes' ? source.node(r.name) : source.pod(r.namespace!, r.name)) : undefined;
    if (!obj || !u) throw notFound(r.resource === 'nodes' ? 'nodemetrics' : 'podmetrics', METRICS_GROUP, r.namespace ? `${r.namespace}/${r.name}` : r.name);
    sendJson(res, 200, r.resource === 'nodes' ? nodeMetrics(obj, u as Usage, now) : podMetrics(obj, u as PodUsage, now));
    return;
  }
  const filter = compileFilter(core.def, q.get('labelSelector'), q.get('fieldSelector'));
  const objs = (await core.registry.list({ namespace: r.namespace, filter })).items;
  const items: Array<Record<string, unknown>> = [];
  for (const o of objs) {
    if (r.resource === 'nodes') {
      const u = source.node(o.metadata.name!);
      if (u) items.push(nodeMetrics(o, u, now));
    } else {
      const u = source.pod(o.metadata.namespace!, o.metadata.name!);
      if (u) items.push(podMetrics(o, u, now));
    }
  }
  sendJson(res, 200, { kind: r.resource === 'nodes' ? 'NodeMetricsList' : 'PodMetricsList', apiVersion: API_VERSION, metadata: {}, items });
}
