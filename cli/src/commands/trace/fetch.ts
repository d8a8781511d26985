/**
 * Reads a pod's journey: the pod (its traceparent annotation names the trace), the control
 * plane's spans (`/debug/nodelet/traces/<id>`, API server and scheduler) and its node's spans
 * through the API server's nodes/proxy (the agent's node API), merged. A node that cannot be
 * reached costs its spans and a warning, not the whole trace.
 */
import { AgentError, describeError } from '@nodelet/base';
import { PODS, type ApiClient, type Pod } from '@nodelet/api';
import { podTraceParent, TRACEPARENT_ANNOTATION, type SpanRecord, type TraceSpansResponse } from '@nodelet/api/tracing';
import { buildWaterfall, type Waterfall } from './waterfall.js';
import type { PodTimestamps } from './render-text.js';

export interface PodTrace {
  pod: Pod;
  traceId: string;
  spans: SpanRecord[];
  waterfall: Waterfall;
  timestamps: PodTimestamps;
  /** Parts that could not be read (the node's agent unreachable, …). */
  warnings: string[];
}

const TRACES = '/debug/nodelet/traces/';

async function spansAt(client: ApiClient, path: string, signal?: AbortSignal): Promise<SpanRecord[]> {
  const body = JSON.parse((await client.getRaw(path, { accept: 'application/json', ...(signal ? { signal } : {}) })).toString('utf8')) as TraceSpansResponse;
  if (!Array.isArray(body.spans)) throw new AgentError('ERR_INTERNAL', `${path}: the answer has no spans`);
  return body.spans;
}

export async function fetchPodTrace(client: ApiClient, namespace: string, name: string, signal?: AbortSignal): Promise<PodTrace> {
  const pod = await client.get(PODS, name, { namespace, ...(signal ? { signal } : {}) });
  const tp = podTraceParent(pod);
  if (!tp) throw new AgentError('ERR_NOT_FOUND', `pod ${namespace}/${name} has no valid ${TRACEPARENT_ANNOTATION} annotation (created before tracing, or by a server without it)`);
  const warnings: string[] = [];
  const spans = await spansAt(client, TRACES + tp.traceId, signal);
  const node = pod.spec?.nodeName;
  if (node) {
    try {
      spans.push(...(await spansAt(client, `/api/v1/nodes/${encodeURIComponent(node)}/proxy${TRACES}${tp.traceId}`, signal)));
    } catch (err) {
      warnings.push(`spans of node ${node} not read: ${describeError(err)}`);
    }
  }
  const seen = new Set<string>();
  const unique = spans.filter((s) => !seen.has(s.spanId) && seen.add(s.spanId));
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True')?.lastTransitionTime;
  return {
    pod, traceId: tp.traceId, spans: unique, waterfall: buildWaterfall(tp.traceId, unique), warnings,
    timestamps: { ...(pod.metadata.creationTimestamp ? { created: pod.metadata.creationTimestamp } : {}), ...(ready ? { ready: String(ready) } : {}) },
  };
}
