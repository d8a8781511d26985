/**
 * Pod events (Pulling, Pulled, Created, Started, Killing, BackOff, Failed, …) written to the API as
 * core/v1 Events, like client-go's recorder: fire-and-forget from the caller's view, a bounded queue
 * (oldest dropped when full), and repeats of the same (object, reason, message) within 10 minutes
 * folded into one Event whose `count` and `lastTimestamp` are patched.
 */
import { randomBytes } from 'node:crypto';
import { Wakeup, describeError, isAbortError, type Clock, type Logger } from '@nodelet/base';
import { EVENTS, type ApiClient, type Event, type Pod } from '@nodelet/api';
import type { EventType, PodEventSink } from '../runtime/pod-runtime.js';

interface Queued {
  key: string;
  event: Event;
}

const AGGREGATE_MS = 10 * 60_000;
const MAX_QUEUE = 1000;

export class EventRecorder implements PodEventSink {
  readonly #api: ApiClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #host: string;
  readonly #queue: Queued[] = [];
  readonly #seen = new Map<string, { name: string; namespace: string; count: number; at: number }>();
  readonly #wake = new Wakeup();
  /** Every event recorded, newest last (bounded); for tests and the node API. */
  readonly recent: Array<{ reason: string; message: string; pod: string; type: EventType }> = [];

  constructor(o: { api: ApiClient; clock: Clock; log: Logger; nodeName: string }) {
    this.#api = o.api;
    this.#clock = o.clock;
    this.#log = o.log;
    this.#host = o.nodeName;
  }

  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void {
    const ns = pod.metadata.namespace ?? 'default';
    const now = new Date(this.#clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.recent.push({ reason, message, pod: `${ns}/${pod.metadata.name}`, type });
    if (this.recent.length > 500) this.recent.shift();
    const event: Event = {
      metadata: { name: `${pod.metadata.name}.${randomBytes(8).toString('hex')}`, namespace: ns },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, ...(fieldPath ? { fieldPath } : {}) },
      reason,
      message,
      type,
      source: { component: 'kubelet', host: this.#host },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: 'kubelet',
      reportingInstance: this.#host,
    };
    this.#queue.push({ key: `${pod.metadata.uid}|${fieldPath ?? ''}|${type}|${reason}|${message}`, event });
    if (this.#queue.length > MAX_QUEUE) this.#queue.shift();
    this.#wake.notify();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#wake.wait(signal);
      } catch (err) {
        if (isAbortError(err)) return;
        throw err;
      }
      while (this.#queue.length > 0 && !signal.aborted) {
        const q = this.#queue.shift()!;
        await this.#write(q, signal);
      }
    }
  }

  async #write(q: Queued, signal: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    const prev = this.#seen.get(q.key);
    try {
      if (prev && now - prev.at < AGGREGATE_MS) {
        prev.count++;
        prev.at = now;
        await this.#api.patch(EVENTS, prev.name, { count: prev.count, lastTimestamp: q.event.lastTimestamp }, { type: 'merge', namespace: prev.namespace, signal });
        return;
      }
      await this.#api.create(EVENTS, q.event, { namespace: q.event.metadata.namespace, signal });
      this.#seen.set(q.key, { name: q.event.metadata.name!, namespace: q.event.metadata.namespace!, count: 1, at: now });
      if (this.#seen.size > 4096) this.#seen.delete(this.#seen.keys().next().value!);
    } catch (err) {
      if (!signal.aborted) this.#log.debug({ reason: q.event.reason, err: describeError(err) }, 'Event write failed');
      if (prev) this.#seen.delete(q.key);
    }
  }
}
