/**
 * One metric's replica proposal (upstream pkg/controller/podautoscaler horizontal.go
 * computeReplicasForMetric): Resource and ContainerResource metrics from metrics.k8s.io, the
 * pods by the scale's selector, their requests, and the MetricStatus to report. Pods, Object and
 * External metrics need the custom and external metrics APIs, which this server does not serve:
 * they fail with upstream's reasons (ScalingActive False), as against a cluster without an adapter.
 */
import { formatQuantity, parseQuantity, parseQuantityMilli, type ApiClient, type MetricSpec, type MetricStatus, type Pod } from '@nodelet/api';
import { calculateReplicas, CalcError, type CalcPod, type PodSample } from './replica-calculator.js';

/** Why a metric gave no proposal: the ScalingActive reason and message upstream sets. */
export class MetricError extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

export interface Proposal {
  replicas: number;
  /** `cpu resource utilization (percentage of request)`: what the rescale event names. */
  metricName: string;
  status: MetricStatus;
}

export interface MetricContext {
  client: ApiClient;
  namespace: string;
  selector: string;
  currentReplicas: number;
  pods: readonly Pod[];
  nowMs: number;
  signal: AbortSignal;
  tolerance?: number | undefined;
}

interface PodMetricsItem {
  metadata: { name: string };
  timestamp: string;
  window: string;
  containers: Array<{ name: string; usage: Record<string, string> }>;
}

/** A Go duration as metrics.k8s.io writes it (`10s`, `1m0.5s`, `500ms`) in ms; 0 for anything else. */
function durationMs(s: string): number {
  let total = 0;
  for (const m of s.matchAll(/([0-9.]+)(ms|h|m|s)/g)) total += Number(m[1]) * ({ h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as Record<string, number>)[m[2]!]!;
  return total;
}

/** CPU in millicores, anything else in its base unit. */
const amount = (resource: string, q: string): number => (resource === 'cpu' ? parseQuantityMilli(q) : parseQuantity(q));
const formatAmount = (resource: string, v: number): string => (resource === 'cpu' ? `${Math.round(v)}m` : formatQuantity(Math.round(v)));

async function podMetrics(c: MetricContext, resource: string, container: string | undefined): Promise<Map<string, PodSample>> {
  let items: PodMetricsItem[];
  try {
    const body = await c.client.getRaw(`/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(c.namespace)}/pods`, { query: { labelSelector: c.selector }, accept: 'application/json', signal: c.signal });
    items = (JSON.parse(body.toString('utf8')) as { items?: PodMetricsItem[] }).items ?? [];
  } catch (err) {
    throw new MetricError('FailedGetResourceMetric', `unable to get metrics for resource ${resource}: unable to fetch metrics from resource metrics API: ${(err as Error).message}`);
  }
  const out = new Map<string, PodSample>();
  for (const it of items) {
    const containers = container === undefined ? it.containers : it.containers.filter((x) => x.name === container);
    if (containers.length === 0) continue;
    let value = 0;
    let complete = true;
    for (const x of containers) {
      const q = x.usage[resource];
      if (q === undefined) complete = false;
      else value += amount(resource, q);
    }
    // A pod missing the resource in one of its containers has no usable sample (upstream drops it).
    if (complete) out.set(it.metadata.name, { value, timeMs: Date.parse(it.timestamp), windowMs: durationMs(it.window) });
  }
  if (out.size === 0) throw new MetricError('FailedGetResourceMetric', `unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`);
  return out;
}

/** The pods as the calculator sees them; the request summed over the containers (or the one named). */
function calcPods(pods: readonly Pod[], resource: string, container: string | undefined): CalcPod[] {
  return pods.map((p) => {
    let request: number | undefined = 0;
    for (const x of p.spec?.containers ?? []) {
      if (container !== undefined && x.name !== container) continue;
      const q = x.resources?.requests?.[resource];
      if (q === undefined) throw new MetricError('FailedGetResourceMetric', `failed to get ${resource} utilization: missing request for ${resource} in container ${x.name} of Pod ${p.metadata.name}`);
      request += amount(resource, String(q));
    }
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
    const startMs = p.status?.startTime ? Date.parse(p.status.startTime) : undefined;
    return {
      name: p.metadata.name!,
      phase: p.status?.phase ?? 'Pending',
      deleting: !!p.metadata.deletionTimestamp,
      ...(startMs !== undefined ? { startMs } : {}),
      ...(ready ? { ready: { status: ready.status, lastTransitionMs: ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : 0 } } : {}),
      request,
    };
  });
}

/** The replicas one metric asks for, or a MetricError with upstream's reason. */
export async function proposeReplicas(spec: MetricSpec, c: MetricContext): Promise<Proposal> {
  const src = spec.type === 'Resource' ? spec.resource : spec.type === 'ContainerResource' ? spec.containerResource : undefined;
  if (!src) {
    const reason = { Pods: 'FailedGetPodsMetric', Object: 'FailedGetObjectMetric', External: 'FailedGetExternalMetric' }[spec.type as string] ?? 'InvalidMetricSourceType';
    throw new MetricError(reason, `the HPA was unable to compute the replica count: ${spec.type} metrics need the custom or external metrics API, which this server does not serve`);
  }
  const container = spec.type === 'ContainerResource' ? spec.containerResource!.container : undefined;
  const resource = src.name;
  const utilizationTarget = src.target.type === 'Utilization' ? src.target.averageUtilization : undefined;
  const what = `${resource}${container !== undefined ? ' container' : ''} resource${utilizationTarget !== undefined ? ' utilization (percentage of request)' : ''}`;
  const samples = await podMetrics(c, resource, container);
  let calc;
  try {
    calc = calculateReplicas({
      currentReplicas: c.currentReplicas,
      pods: calcPods(c.pods, resource, container),
      samples,
      cpu: resource === 'cpu',
      target: utilizationTarget !== undefined ? { utilization: utilizationTarget } : { averageValue: amount(resource, String(src.target.averageValue)) },
      nowMs: c.nowMs,
      ...(c.tolerance !== undefined ? { tolerance: c.tolerance } : {}),
    });
  } catch (err) {
    if (err instanceof CalcError) throw new MetricError('FailedGetResourceMetric', `failed to get ${resource} utilization: ${err.message}`);
    throw err;
  }
  const current = { averageValue: formatAmount(resource, calc.averageValue), ...(calc.utilization !== undefined ? { averageUtilization: calc.utilization } : {}) };
  const status: MetricStatus = container !== undefined
    ? { type: 'ContainerResource', containerResource: { name: resource, container, current } }
    : { type: 'Resource', resource: { name: resource, current } };
  return { replicas: calc.replicas, metricName: what, status };
}
