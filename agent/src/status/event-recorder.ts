/**
 * Pod events (Pulling, Pulled, Created, Started, Killing, BackOff, Failed, …) as the kubelet
 * writes them: the shared recorder of `@nodelet/api` (bounded queue, one writer, repeats within
 * 10 minutes folded into one Event's `count`), with component `kubelet`, this node as source host,
 * and the container as `fieldPath`. Also keeps the latest events in memory for the node API and
 * tests.
 */
import type { Clock, Logger } from '@nodelet/base';
import { EventRecorder as ApiEventRecorder, type ApiClient, type Pod } from '@nodelet/api/agent';
import type { EventType, PodEventSink } from '../kubecontainer/events.js';

const RECENT = 500;

export class EventRecorder implements PodEventSink {
  readonly #rec: ApiEventRecorder;
  /** Every event recorded, newest last (bounded); for tests and the node API. */
  readonly recent: Array<{ reason: string; message: string; pod: string; type: EventType }> = [];

  constructor(o: { api: ApiClient; clock: Clock; log: Logger; nodeName: string }) {
    this.#rec = new ApiEventRecorder({ client: o.api, component: 'kubelet', host: o.nodeName, clock: o.clock, logger: o.log });
  }

  /** Fire-and-forget; never throws. */
  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void {
    this.recent.push({ reason, message, pod: `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`, type });
    if (this.recent.length > RECENT) this.recent.shift();
    void this.#rec.record({ apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata }, type, reason, message, fieldPath ? { fieldPath } : {});
  }

  /** Drops the aggregation keys of a deleted pod's events (called by PodRuntime.forget). */
  forget(uid: string): void {
    this.#rec.forget(uid);
  }

  /** An event about this node (kubelet's nodeRef: kind Node, name and UID the node name). Fire-and-forget. */
  nodeEvent(nodeName: string, type: EventType, reason: string, message: string): void {
    this.recent.push({ reason, message, pod: '', type });
    if (this.recent.length > RECENT) this.recent.shift();
    void this.#rec.record({ apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, uid: nodeName } }, type, reason, message, {});
  }

  /** Events are written as they come until `signal` aborts; then what is queued is dropped. */
  async run(signal: AbortSignal): Promise<void> {
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.#rec.close();
  }
}
