/**
 * The recent spans of one process, grouped by trace, so a pod's journey can be read back without a
 * collector. Bounded twice: at most `maxTraces` traces (the oldest trace is dropped first) and at
 * most `maxSpansPerTrace` spans in one trace (later spans of a full trace are dropped and counted).
 * Memory is O(maxTraces × maxSpansPerTrace) whatever the pod churn. Synchronous, single-threaded.
 */
import type { SpanRecord } from './span-record.js';

export interface SpanStoreOptions {
  /** Default 4096 traces (pods). */
  maxTraces?: number;
  /** Default 128 spans per trace. */
  maxSpansPerTrace?: number;
}

export class SpanStore {
  readonly #maxTraces: number;
  readonly #maxSpans: number;
  /** Insertion order is age: Map iteration gives the oldest trace first. */
  readonly #traces = new Map<string, SpanRecord[]>();
  #dropped = 0;

  constructor(o: SpanStoreOptions = {}) {
    this.#maxTraces = Math.max(1, o.maxTraces ?? 4096);
    this.#maxSpans = Math.max(1, o.maxSpansPerTrace ?? 128);
  }

  add(s: SpanRecord): void {
    let spans = this.#traces.get(s.traceId);
    if (!spans) {
      if (this.#traces.size >= this.#maxTraces) {
        const oldest = this.#traces.keys().next().value as string;
        this.#dropped += this.#traces.get(oldest)!.length;
        this.#traces.delete(oldest);
      }
      this.#traces.set(s.traceId, (spans = []));
    }
    if (spans.length >= this.#maxSpans) {
      this.#dropped++;
      return;
    }
    spans.push(s);
  }

  /** The spans kept for `traceId`, in the order they ended (a copy). */
  get(traceId: string): SpanRecord[] {
    return [...(this.#traces.get(traceId) ?? [])];
  }

  get traceCount(): number {
    return this.#traces.size;
  }

  /** Spans dropped by either bound since start. */
  get dropped(): number {
    return this.#dropped;
  }
}
