/**
 * The API server's part of each pod's journey trace (docs/tracing.md):
 *
 *   POST pods ─▶ begin(): the pod's traceparent annotation (a client's valid one keeps its trace) ─▶ root span opens
 *            ─▶ stored and visible ─▶ created(): `api.create` span ─▶ … scheduler, agent …
 *   PATCH/PUT pods/status with Ready=True ─▶ statusWritten(): root span ends ("Ready seen by the API")
 *
 * The root span stays open in memory between create and Ready: at most `maxOpen` of them (the
 * oldest is dropped unrecorded past that, e.g. pods that never become Ready). Nothing here writes
 * to the API beyond the annotation that rides on the create itself. One instance per API server;
 * single-threaded, synchronous.
 */
import { ATTR, formatTraceparent, parseTraceparent, SPAN, TRACEPARENT_ANNOTATION, type JourneyTracer, type ScopedTracer, type SpanHandle, type SpanRecord } from '@nodelet/api/tracing';
import type { ApiObject } from './object.js';

/** Default bound on journeys between create and Ready. */
export const DEFAULT_MAX_OPEN_JOURNEYS = 10_000;

/** What handleCreate holds between admission and the stored pod. */
export interface PendingJourney {
  /** The pod is stored and visible: records `api.create` and keeps the root open until Ready. */
  created(pod: ApiObject): void;
}

export class PodJourneys {
  readonly #tracer: JourneyTracer;
  readonly #api: ScopedTracer;
  readonly #maxOpen: number;
  /** Open root spans by pod UID, oldest first. */
  readonly #open = new Map<string, SpanHandle>();

  constructor(tracer: JourneyTracer, o: { maxOpen?: number } = {}) {
    this.#tracer = tracer;
    this.#api = tracer.scope('apiserver');
    this.#maxOpen = Math.max(1, o.maxOpen ?? DEFAULT_MAX_OPEN_JOURNEYS);
  }

  /** Epoch ms on the tracer's clock: when a create request arrived. */
  now(): number {
    return this.#tracer.now();
  }

  /**
   * Opens the journey of a pod about to be created (after admission, before the write) and sets
   * its annotation. A client's traceparent is kept as the root's parent only when it is valid;
   * any other value is replaced. If the create then fails, the returned journey is just dropped.
   */
  begin(pod: ApiObject, receivedAt: number): PendingJourney {
    const annotations = (pod.metadata.annotations ??= {});
    const client = parseTraceparent(annotations[TRACEPARENT_ANNOTATION]);
    const root = this.#api.startRoot(SPAN.journey, client, {}, receivedAt);
    annotations[TRACEPARENT_ANNOTATION] = formatTraceparent(root.context);
    return {
      created: (stored) => {
        const attrs = podAttributes(stored);
        for (const [k, v] of Object.entries(attrs)) root.setAttribute(k, v);
        this.#api.record(SPAN.apiCreate, root.context, receivedAt, this.now(), attrs);
        const uid = stored.metadata.uid;
        if (!uid) return;
        if (this.#open.size >= this.#maxOpen) this.#open.delete(this.#open.keys().next().value as string);
        this.#open.set(uid, root);
      },
    };
  }

  /** A pod status was stored: the first one with Ready=True ends the pod's journey. */
  statusWritten(pod: ApiObject): void {
    const uid = pod.metadata.uid;
    if (!uid || this.#open.size === 0) return;
    const root = this.#open.get(uid);
    if (!root) return;
    const conditions = (pod.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions;
    if (!conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    this.#open.delete(uid);
    const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (node) root.setAttribute(ATTR.nodeName, node);
    root.end(this.now());
  }

  /** Journeys still waiting for Ready. */
  get openCount(): number {
    return this.#open.size;
  }

  /** The spans this process kept for `traceId` (API server and scheduler). */
  spans(traceId: string): SpanRecord[] {
    return this.#tracer.spans(traceId);
  }
}

function podAttributes(pod: ApiObject): Record<string, string> {
  return {
    [ATTR.podName]: pod.metadata.name ?? '',
    [ATTR.namespace]: pod.metadata.namespace ?? '',
    [ATTR.podUid]: pod.metadata.uid ?? '',
  };
}
