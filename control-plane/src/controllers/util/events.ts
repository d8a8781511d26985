/**
 * A small core/v1 Event recorder (client-go `record.EventRecorder`, without rate limiting):
 * the first occurrence creates `<name>.<hex nanos>`; a repeat of the same object, reason and
 * message within 10 minutes bumps `count` and `lastTimestamp` of that event instead.
 * Recording never throws: a failed write is logged at debug and dropped, as upstream does.
 */
import { EVENTS, type ApiClient, type Event, type KubeObject } from '@nodelet/api';
import { systemClock, type Clock, type Logger } from '@nodelet/base';

const DEDUP_WINDOW_MS = 10 * 60_000;
const MAX_CACHE = 4096;

export interface EventRecorderOptions {
  client: ApiClient;
  /** `source.component` and `reportingComponent`, e.g. `default-scheduler`. */
  component: string;
  /** `reportingInstance`; defaults to `<component>-<hostname>`. */
  instance?: string;
  clock?: Clock;
  logger: Logger;
}

export type EventType = 'Normal' | 'Warning';

interface Seen {
  name: string;
  namespace: string;
  count: number;
  first: string;
  at: number;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #clock: Clock;
  readonly #seen = new Map<string, Seen>();
  /** Makes names unique within one millisecond (names are `<object>.<hex nanoseconds>`). */
  #seq = 0;

  constructor(o: EventRecorderOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  /** Fire-and-forget: returns the write's promise only for tests; it never rejects. */
  record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    return this.#write(obj, type, reason, message).catch((err) => {
      this.#o.logger.debug({ err, reason }, 'Could not write event');
    });
  }

  async #write(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const now = this.#clock.now();
    const namespace = obj.metadata.namespace || 'default';
    const dedupKey = `${obj.metadata.uid}|${reason}|${type}|${message}`;
    const prev = this.#seen.get(dedupKey);
    const events = this.#o.client.resource(EVENTS, namespace);
    if (prev && now - prev.at < DEDUP_WINDOW_MS) {
      prev.count++;
      prev.at = now;
      await events.patch(prev.name, { count: prev.count, lastTimestamp: rfc3339(now) }, { type: 'merge' });
      return;
    }
    const name = `${obj.metadata.name}.${(BigInt(now) * 1_000_000n + BigInt(this.#seq++ % 1_000_000)).toString(16)}`;
    const ts = rfc3339(now);
    const ev: Event = {
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
      },
      reason,
      message,
      type,
      source: { component: this.#o.component },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      reportingComponent: this.#o.component,
      reportingInstance: this.#o.instance ?? `${this.#o.component}-${process.env['HOSTNAME'] ?? 'nodelet'}`,
    };
    if (this.#seen.size >= MAX_CACHE) this.#seen.delete(this.#seen.keys().next().value as string);
    this.#seen.set(dedupKey, { name, namespace, count: 1, first: ts, at: now });
    await events.create(ev);
  }
}
