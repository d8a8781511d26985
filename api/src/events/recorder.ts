/**
 * core/v1 Events written the way client-go's recorder writes them, for every component that
 * reports on objects: the agent (component `kubelet`, pod events with a container's fieldPath),
 * the scheduler and the controllers.
 *
 *   record() ─▶ bounded queue (oldest dropped) ─▶ one writer ─┬─▶ POST <name>.<hex nanos>      first occurrence
 *                                                              └─▶ PATCH count, lastTimestamp  a repeat within 10 minutes
 *
 * A repeat is the same object, fieldPath, type, reason and message (client-go's EventCorrelator
 * key, whose source is this recorder's). Writes go one at a time, so a repeat always finds the
 * Event its first occurrence created. Recording never throws and never waits for the API: a
 * failed write is logged at debug and dropped, as upstream does.
 *
 * Before either, the spam filter (client-go's EventSourceObjectSpamFilter): each involved object
 * has a token bucket of {@link SPAM_BURST} events refilled at one per {@link SPAM_REFILL_MS}, and
 * an event finding it empty is dropped, repeats included. A pod crash-looping for hours costs a
 * few writes, not one per restart and probe failure.
 */
import { systemClock, type Clock, type Logger } from '@nodelet/base';
import type { ApiClient } from '../client/index.js';
import { EVENTS, type Event, type KubeObject } from '../types/index.js';
import { rfc3339 } from '../time.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  client: ApiClient;
  /** `source.component` and `reportingComponent`, e.g. `kubelet` or `default-scheduler`. */
  component: string;
  /** `source.host`: the node the kubelet reports from; unset for control-plane components. */
  host?: string;
  /** `reportingInstance`; defaults to `host`, else `<component>-<hostname>`. */
  instance?: string;
  clock?: Clock;
  logger: Logger;
  /** Events waiting to be written; when full the oldest is dropped (default 1000). */
  maxQueue?: number;
}

/** Within this window a repeat bumps the first Event's count instead of creating another. */
const AGGREGATE_MS = 10 * 60_000;
const MAX_SEEN = 4096;
/** Events about one object written at once before the spam filter drops (client-go's defaultSpamBurst). */
export const SPAM_BURST = 25;
/** One more event about that object is let through per this long (client-go's defaultSpamQPS, 1/300 s). */
export const SPAM_REFILL_MS = 300_000;

interface Bucket {
  tokens: number;
  at: number;
}

interface Queued {
  key: string;
  event: Event;
  at: number;
  done: () => void;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  at: number;
}

export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #clock: Clock;
  readonly #instance: string;
  readonly #queue: Queued[] = [];
  readonly #seen = new Map<string, Seen>();
  /** Spam-filter buckets by involved object, least recently used first (at most {@link MAX_SEEN}). */
  readonly #buckets = new Map<string, Bucket>();
  readonly #stop = new AbortController();
  #draining = false;
  /** Makes names unique within one millisecond (names are `<object>.<hex nanoseconds>`). */
  #seq = 0;

  constructor(o: EventRecorderOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#instance = o.instance ?? o.host ?? `${o.component}-${process.env['HOSTNAME'] ?? 'nodelet'}`;
  }

  /**
   * Queues an Event about `obj` (its apiVersion, kind and metadata name the involved object).
   * Returns at once; the promise resolves when the Event is written, dropped or closed over, and
   * never rejects (tests and controllers that want their events in order may await it).
   */
  record(obj: KubeObject, type: EventType, reason: string, message: string, o: { fieldPath?: string } = {}): Promise<void> {
    if (this.#stop.signal.aborted) return Promise.resolve();
    const now = this.#clock.now();
    if (!this.#admit(obj, now)) return Promise.resolve();
    const namespace = obj.metadata.namespace || 'default';
    const ts = rfc3339(now);
    const name = `${obj.metadata.name}.${(BigInt(now) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16)}`;
    const event: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
        ...(o.fieldPath ? { fieldPath: o.fieldPath } : {}),
      },
      reason,
      message,
      type,
      source: { component: this.#o.component, ...(this.#o.host ? { host: this.#o.host } : {}) },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      reportingComponent: this.#o.component,
      reportingInstance: this.#instance,
    };
    const key = `${obj.metadata.uid}|${o.fieldPath ?? ''}|${type}|${reason}|${message}`;
    return new Promise((done) => {
      this.#queue.push({ key, event, at: now, done });
      if (this.#queue.length > (this.#o.maxQueue ?? 1000)) this.#queue.shift()!.done();
      if (!this.#draining) void this.#drain();
    });
  }

  /**
   * Forgets the events of object `uid` (it is gone: its events can no longer repeat), so a node
   * that churns pods does not keep up to 4,096 dead keys for the aggregation window. A later event
   * about the same UID simply starts a new Event.
   */
  forget(uid: string): void {
    const prefix = `${uid}|`;
    for (const key of this.#seen.keys()) if (key.startsWith(prefix)) this.#seen.delete(key);
    for (const key of this.#buckets.keys()) if (key.startsWith(prefix)) this.#buckets.delete(key);
  }

  /** Takes a token from `obj`'s spam-filter bucket; false when it has none (the event is dropped). */
  #admit(obj: KubeObject, now: number): boolean {
    const m = obj.metadata;
    const key = `${m.uid ?? ''}|${obj.apiVersion ?? ''}|${obj.kind ?? ''}|${m.namespace ?? ''}|${m.name ?? ''}`;
    const b = this.#buckets.get(key) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + Math.max(0, now - b.at) / SPAM_REFILL_MS);
    b.at = now;
    this.#buckets.delete(key);
    this.#buckets.set(key, b);
    if (this.#buckets.size > MAX_SEEN) this.#buckets.delete(this.#buckets.keys().next().value!);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** How many first occurrences are remembered for aggregation (for tests and diagnostics). */
  get remembered(): number {
    return this.#seen.size;
  }

  /** Stops writing: what is queued is dropped and a write in flight is cancelled. Idempotent. */
  close(): void {
    this.#stop.abort();
    for (const q of this.#queue.splice(0)) q.done();
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      for (let q = this.#queue.shift(); q; q = this.#queue.shift()) {
        await this.#write(q);
        q.done();
      }
    } finally {
      this.#draining = false;
    }
  }

  async #write(q: Queued): Promise<void> {
    const signal = this.#stop.signal;
    if (signal.aborted) return;
    const prev = this.#seen.get(q.key);
    const events = this.#o.client.resource(EVENTS, q.event.metadata.namespace);
    try {
      if (prev && q.at - prev.at < AGGREGATE_MS) {
        prev.count++;
        prev.at = q.at;
        // Most recent last, so that expiry below only ever looks at the front.
        this.#seen.delete(q.key);
        this.#seen.set(q.key, prev);
        await events.patch(prev.name, { count: prev.count, lastTimestamp: q.event.lastTimestamp }, { type: 'merge', signal });
        return;
      }
      await events.create(q.event, { signal });
      // Past the window a key can only start a new Event: drop it instead of keeping it until 4,096 others push it out.
      for (const [key, seen] of this.#seen) {
        if (q.at - seen.at < AGGREGATE_MS && this.#seen.size < MAX_SEEN) break;
        this.#seen.delete(key);
      }
      this.#seen.set(q.key, { name: q.event.metadata.name!, namespace: q.event.metadata.namespace!, count: 1, at: q.at });
    } catch (err) {
      if (!signal.aborted) this.#o.logger.debug({ err, reason: q.event.reason }, 'Could not write event');
      // The Event to bump may be gone (expired, deleted): the next repeat creates a new one.
      if (prev) this.#seen.delete(q.key);
    }
  }
}
