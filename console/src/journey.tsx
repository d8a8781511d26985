/**
 * A pod's journey (docs/tracing.md) drawn from its trace: the architecture as a row of stages —
 * client → API server → store → controller manager → scheduler → agent → CNI → CRI → runc → Ready —
 * each arrow labelled with its protocol and each stage lit once a span of it arrived, beside the
 * waterfall of the spans (the data `nodelet trace pod` prints). The spans are read again whenever
 * the pod changes (its watch event), so a pod created from the console lights up as it goes.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import type { Pod } from './k8s.js';
// Type-only (erased by esbuild): the span records exactly as the trace endpoints serve them.
import type { SpanRecord } from '@nodelet/api/tracing';

const TRACEPARENT_ANNOTATION = 'trace.nodelet.io/traceparent';

/** The pod's trace id from its W3C traceparent annotation, if it has a well-formed one. */
export function traceIdOf(pod: Pod): string | undefined {
  const value = (pod.metadata as { annotations?: Record<string, string> }).annotations?.[TRACEPARENT_ANNOTATION];
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(value ?? '');
  return m?.[1];
}

interface Stage {
  name: string;
  /** The protocol of the arrow into this stage. */
  via?: { label: string; cls: string };
  /** The spans that are this stage's. */
  spans: (s: SpanRecord) => boolean;
  /** A stage with no span of its own, lit by what the pod shows (the ReplicaSet controller: the pod's owner). */
  shown?: (p: Pod) => boolean;
}

const STAGES: Stage[] = [
  { name: 'kubectl / console', spans: () => false },
  { name: 'API server', via: { label: 'JSON/HTTP', cls: 'p-json' }, spans: (s) => s.name === 'api.create' },
  { name: 'etcd / SQLite', via: { label: 'store', cls: 'p-store' }, spans: (s) => s.name === 'api.create' },
  {
    name: 'controller manager',
    via: { label: 'watch', cls: 'p-watch' },
    spans: () => false,
    shown: (p) => !!(p.metadata as { ownerReferences?: { kind?: string }[] }).ownerReferences?.some((o) => o.kind === 'ReplicaSet'),
  },
  { name: 'scheduler', via: { label: 'watch', cls: 'p-watch' }, spans: (s) => s.name.startsWith('scheduler.') },
  { name: 'agent', via: { label: 'protobuf watch', cls: 'p-proto' }, spans: (s) => s.name.startsWith('agent.') },
  { name: 'CNI', via: { label: 'CNI exec', cls: 'p-cni' }, spans: (s) => s.name === 'cni.add' },
  { name: 'CRI', via: { label: 'CRI gRPC', cls: 'p-cri' }, spans: (s) => s.name === 'agent.sandbox' || s.name.startsWith('agent.container.') },
  { name: 'runc', via: { label: 'OCI', cls: 'p-oci' }, spans: (s) => s.name === 'agent.container.start' },
  { name: 'Ready', via: { label: 'status', cls: 'p-json' }, spans: (s) => s.name === 'pod journey' },
];

/** Merges span lists by span id (the API server's and the agent's), ordered by start. */
export function mergeSpans(...lists: SpanRecord[][]): SpanRecord[] {
  const byId = new Map<string, SpanRecord>();
  for (const l of lists) for (const s of l) byId.set(s.spanId, s);
  return [...byId.values()].sort((a, b) => a.startMs - b.startMs || b.endMs - a.endMs);
}

function depthOf(s: SpanRecord, byId: Map<string, SpanRecord>): number {
  let d = 0;
  for (let p = s.parentSpanId && byId.get(s.parentSpanId); p && d < 10; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined) d++;
  return d;
}

const ms = (n: number): string => `${n.toFixed(1)} ms`;

/**
 * The time a stage's spans cover (their union): the agent's spans nest (agent.sync holds the
 * sandbox, CNI, pull and start spans), so a sum would count the same milliseconds more than once.
 */
export function coveredMs(spans: readonly SpanRecord[]): number {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  let covered = 0;
  let end = -Infinity;
  for (const s of sorted) {
    const from = Math.max(s.startMs, end);
    if (s.endMs > from) covered += s.endMs - from;
    end = Math.max(end, s.endMs);
  }
  return covered;
}

export function JourneyView(props: { api: Api; pod: Pod; onClose(): void }) {
  const { namespace, name, resourceVersion } = props.pod.metadata;
  const traceId = traceIdOf(props.pod);
  const node = props.pod.spec?.nodeName;
  const [spans, setSpans] = useState<SpanRecord[]>([]);
  const [notes, setNotes] = useState<string[]>([]);
  useEffect(() => {
    if (!traceId) return undefined;
    let live = true;
    const read = async (): Promise<void> => {
      const sources = [`/debug/nodelet/traces/${traceId}`, ...(node ? [`/api/v1/nodes/${node}/proxy/debug/nodelet/traces/${traceId}`] : [])];
      const got = await Promise.allSettled(sources.map((p) => props.api.get(p)));
      if (!live) return;
      const lists = got.map((g) => (g.status === 'fulfilled' ? ((g.value as { spans?: SpanRecord[] }).spans ?? []) : []));
      setSpans((old) => mergeSpans(old.filter((s) => s.traceId === traceId), ...lists));
      setNotes(got.flatMap((g, i) => (g.status === 'rejected' ? [`${i === 0 ? 'API server' : `node ${node}`}: ${(g.reason as Error).message}`] : [])));
    };
    void read();
    // A span is recorded just after the write a watch event reports: read once more shortly after.
    const again = setTimeout(() => void read(), 700);
    return () => {
      live = false;
      clearTimeout(again);
    };
  }, [props.api, traceId, node, resourceVersion]);

  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const t0 = spans.length ? Math.min(...spans.map((s) => s.startMs)) : 0;
  const total = spans.length ? Math.max(...spans.map((s) => s.endMs)) - t0 || 1 : 1;
  return (
    <section aria-labelledby="journey-title" id="journey">
      <div class="panel-head">
        <h2 id="journey-title">
          Journey of {namespace}/{name}
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {!traceId && <p class="hint">This pod has no trace (no {TRACEPARENT_ANNOTATION} annotation).</p>}
      {notes.map((n) => (
        <p role="alert" class="error" key={n}>
          {n}
        </p>
      ))}
      <ol class="journey" aria-label="The pod's path through the architecture">
        {STAGES.map((st, i) => {
          const mine = spans.filter(st.spans);
          const shown = st.shown?.(props.pod) ?? false;
          const lit = i === 0 ? spans.length > 0 : mine.length > 0 || (shown && spans.length > 0);
          const took = coveredMs(mine);
          return (
            <li key={st.name} class={`stage ${lit ? 'lit' : ''}`} data-stage={st.name} data-lit={String(lit)}>
              {st.via && <span class={`edge ${st.via.cls}`}>{st.via.label} →</span>}
              <span class="box">
                <strong>{st.name}</strong>
                <span class="hint">{lit ? (mine.length ? ms(took) : shown ? 'made the pod (no span)' : 'sent') : 'waiting'}</span>
              </span>
            </li>
          );
        })}
      </ol>
      {spans.length > 0 && (
        <table class="waterfall" aria-label="Spans of the journey">
          <thead>
            <tr>
              <th scope="col">Offset</th>
              <th scope="col">Duration</th>
              <th scope="col">Step</th>
              <th scope="col">By</th>
              <th scope="col">Timeline</th>
            </tr>
          </thead>
          <tbody>
            {spans.map((s) => (
              <tr key={s.spanId} data-span={s.name} class={s.error ? 'bad' : ''}>
                <td>{ms(s.startMs - t0)}</td>
                <td>{ms(s.endMs - s.startMs)}</td>
                <td class={`depth-${Math.min(depthOf(s, byId), 4)}`}>
                  {s.name}
                  {s.error ? `: ${s.error}` : ''}
                </td>
                <td>{s.scope}</td>
                <td class="timeline">
                  <div class="bar" style={{ marginLeft: `${((s.startMs - t0) / total) * 100}%`, width: `${Math.max(((s.endMs - s.startMs) / total) * 100, 0.5)}%` }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
