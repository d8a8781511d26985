/**
 * A pod journey's spans as a waterfall (docs/tracing.md): one row per step, in time order, children
 * indented under their step, and the waits between top-level steps as rows of their own, so the
 * top level tiles the journey from the create request to the Ready status the API server stored.
 *
 *   root "pod journey" [create request ─────────────────────────────── Ready stored]
 *   top level:          api.create · wait · scheduler.queue · … · agent.status
 *   sum of top level = journey, less the time steps overlap (reported as `overlapMs`)
 *
 * Pure: spans in, rows out; rendering is render-text.ts and render-svg.ts.
 */
import { SPAN, type SpanRecord } from '@nodelet/api/tracing';

export interface WaterfallRow {
  name: string;
  /** 0 for the top level (steps and waits), 1+ for steps inside a step. */
  depth: number;
  startMs: number;
  endMs: number;
  /** A wait between steps, computed: no component recorded it. */
  gap: boolean;
  /** nodelet-server or nodelet-agent; scope apiserver/scheduler/agent. */
  service?: string;
  scope?: string;
  attributes?: SpanRecord['attributes'];
  error?: string;
}

export interface Waterfall {
  traceId: string;
  /** The root span's start (create request received) and end (Ready stored); spans' extent when there is no root. */
  startMs: number;
  endMs: number;
  /** Whether the root span was found (the journey ended with Ready seen by the API server). */
  complete: boolean;
  rows: WaterfallRow[];
  /** Top-level steps plus waits, each clipped to the journey. */
  topLevelSumMs: number;
  /** Time two top-level steps ran at once (sum − journey). */
  overlapMs: number;
  /** Spans whose parent is neither the root nor another span here (shown last, at depth 0, not summed). */
  detached: number;
}

/** Waits shorter than this are not rows (clock resolution). */
const MIN_GAP_MS = 0.5;

/** What the wait before `next` (after `prev`) is, by the steps around it. */
export function gapName(prev: string | undefined, next: string | undefined): string {
  if (next === SPAN.schedulerQueue) return 'waiting for the scheduler (watch)';
  if (next === SPAN.agentAdmit) return 'waiting for the agent (watch)';
  if (next === SPAN.agentSync && prev === SPAN.agentAdmit) return 'waiting for the pod worker';
  if (next === SPAN.agentSync) return 'waiting to sync again (backoff or PLEG)';
  if (next === SPAN.agentObserve) return 'waiting for the runtime view (PLEG)';
  if (next === undefined) return 'waiting for Ready to be stored';
  return 'untraced';
}

export function buildWaterfall(traceId: string, spans: readonly SpanRecord[]): Waterfall {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const root = spans.find((s) => s.name === SPAN.journey && (!s.parentSpanId || !byId.has(s.parentSpanId)));
  const children = new Map<string, SpanRecord[]>();
  for (const s of spans) {
    if (s === root || !s.parentSpanId) continue;
    const list = children.get(s.parentSpanId) ?? [];
    list.push(s);
    children.set(s.parentSpanId, list);
  }
  const order = (a: SpanRecord, b: SpanRecord): number => a.startMs - b.startMs || a.endMs - b.endMs;
  const startMs = root?.startMs ?? Math.min(...spans.map((s) => s.startMs));
  const endMs = root?.endMs ?? Math.max(...spans.map((s) => s.endMs));
  const top = root
    ? (children.get(root.spanId) ?? []).sort(order)
    : spans.filter((s) => !s.parentSpanId || !byId.has(s.parentSpanId)).sort(order);

  const rows: WaterfallRow[] = [];
  const spanRow = (s: SpanRecord, depth: number): WaterfallRow => ({
    name: s.name, depth, startMs: s.startMs, endMs: s.endMs, gap: false, service: s.service, scope: s.scope, attributes: s.attributes, ...(s.error ? { error: s.error } : {}),
  });
  const addTree = (s: SpanRecord, depth: number): void => {
    rows.push(spanRow(s, depth));
    for (const c of (children.get(s.spanId) ?? []).sort(order)) addTree(c, depth + 1);
  };
  let cursor = startMs;
  let sum = 0;
  let prev: string | undefined;
  for (const s of top) {
    if (s.startMs - cursor >= MIN_GAP_MS) {
      rows.push({ name: gapName(prev, s.name), depth: 0, startMs: cursor, endMs: s.startMs, gap: true });
      sum += s.startMs - cursor;
    }
    addTree(s, 0);
    sum += Math.max(0, Math.min(s.endMs, endMs) - Math.max(s.startMs, startMs));
    cursor = Math.max(cursor, Math.min(s.endMs, endMs));
    prev = s.name;
  }
  if (root && endMs - cursor >= MIN_GAP_MS) {
    rows.push({ name: gapName(prev, undefined), depth: 0, startMs: cursor, endMs, gap: true });
    sum += endMs - cursor;
  }
  const placed = new Set<SpanRecord>();
  const mark = (s: SpanRecord): void => {
    placed.add(s);
    for (const c of children.get(s.spanId) ?? []) mark(c);
  };
  if (root) placed.add(root);
  for (const s of top) mark(s);
  const detached = spans.filter((s) => !placed.has(s)).sort(order);
  for (const s of detached) rows.push(spanRow(s, 0));
  return { traceId, startMs, endMs, complete: !!root, rows, topLevelSumMs: sum, overlapMs: Math.max(0, sum - (endMs - startMs)), detached: detached.length };
}
