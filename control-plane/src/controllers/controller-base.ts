/**
 * The skeleton every controller shares, as client-go controllers share theirs: informers whose
 * events enqueue keys, a rate-limited work queue, workers that reconcile one key at a time (run by
 * runController, runtime.ts), optional periodic re-queues, an event recorder, and close().
 *
 *   watch(R, keyOf) ──add/update/delete──▶ queue.add(key) ──▶ workers ──▶ reconcile(key)
 *   every(ms, keys)  ──timer, after sync──▶ queue.add(key)
 *
 * A controller extends it, declares what it watches in its constructor and implements reconcile;
 * reconcile is level-triggered: it reads the latest cached state for the key, never the event.
 */
import { EventRecorder, PODS, type ApiClient, type Informer, type KubeObject, type Pod, type ResourceType, type WorkQueue } from '@nodelet/api';
import { DisposableStore, hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type ReconcileResult, type SharedInformers } from './runtime.js';
import type { StartControllerManagerOptions } from './index.js';
import type { Expectations } from './util/expectations.js';
import { keyOf } from './util/pods.js';

/** What the controller manager gives every controller. */
export interface ControllerDeps {
  /** The client of the controller's own identity (kube-system/<account>). */
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  random: () => number;
  logger: Logger;
  options: StartControllerManagerOptions;
}

export interface ControllerBaseOptions {
  /** The name `--controllers` and the logs use. */
  name: string;
  /** Concurrent workers (default 2); one key is never reconciled by two at once. */
  workers?: number;
  /** Events are written as this component (`source.component`), e.g. `deployment-controller`; none without it. */
  eventComponent?: string;
}

type InformerEvent = 'add' | 'update' | 'delete';
const ALL_EVENTS: readonly InformerEvent[] = ['add', 'update', 'delete'];

export abstract class ControllerBase implements Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly workers: number;
  protected readonly client: ApiClient;
  protected readonly clock: Clock;
  protected readonly random: () => number;
  protected readonly log: Logger;
  protected readonly options: StartControllerManagerOptions;
  readonly #informers: SharedInformers;
  readonly #recorder: EventRecorder | undefined;
  readonly #periodic: Array<{ ms: number; keys: () => Iterable<string> }> = [];
  /** Informer handlers and timers: gone at close(). */
  readonly #owned = new DisposableStore();

  constructor(d: ControllerDeps, o: ControllerBaseOptions) {
    this.name = o.name;
    this.workers = o.workers ?? 2;
    this.client = d.client;
    this.clock = d.clock;
    this.random = d.random;
    this.log = d.logger;
    this.options = d.options;
    this.#informers = d.informers;
    this.queue = newQueue(d.clock);
    this.#recorder = o.eventComponent ? new EventRecorder({ client: d.client, component: o.eventComponent, clock: d.clock, logger: d.logger }) : undefined;
  }

  abstract reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;

  /** Adds `key` to the work queue; a controller may override it, e.g. to note when a change came. */
  protected enqueue(key: string): void {
    this.queue.add(key);
  }

  /** The shared informer of `r` (cluster-wide, or one namespace), without handlers of ours. */
  protected informer<T extends KubeObject>(r: ResourceType<T>, namespace?: string): Informer<T> {
    return this.#informers.for(r, { namespace });
  }

  /**
   * The shared informer of `r`, enqueuing `key(obj)` (default namespace/name) on `on` events
   * (default all three); a key of undefined enqueues nothing. For an update, the new object's.
   */
  protected watch<T extends KubeObject>(r: ResourceType<T>, key: (obj: T) => string | undefined = keyOf, on: readonly InformerEvent[] = ALL_EVENTS): Informer<T> {
    const inf = this.informer(r);
    const enqueue = (obj: T): void => {
      const k = key(obj);
      if (k !== undefined) this.enqueue(k);
    };
    this.#owned.add(
      inf.on({
        ...(on.includes('add') ? { onAdd: enqueue } : {}),
        ...(on.includes('update') ? { onUpdate: (_old: T, obj: T) => enqueue(obj) } : {}),
        ...(on.includes('delete') ? { onDelete: enqueue } : {}),
      }),
    );
    return inf;
  }

  /** Registers handlers of the controller's own on `inf` (removed at close). */
  protected handle<T extends KubeObject>(inf: Informer<T>, handlers: Parameters<Informer<T>['on']>[0]): void {
    this.#owned.add(inf.on(handlers));
  }

  /**
   * Watches the pods a controller of this kind owns: `ownerOf(pod)` is the owner's key. Creates
   * and deletions (a pod going terminating counts) are observed in `expect`, and the owner — old
   * and new, should the pod change hands — is enqueued. `orphan` sees pods no owner of ours
   * controls (for adoption).
   */
  protected watchOwnedPods(ownerOf: (p: Pod) => string | undefined, expect: Expectations, orphan?: (p: Pod) => void): Informer<Pod> {
    const pods = this.informer(PODS);
    this.handle(pods, {
      onAdd: (p) => {
        const k = ownerOf(p);
        if (!k) return orphan?.(p);
        expect.observedAdd(k);
        this.enqueue(k);
      },
      onUpdate: (o, p) => {
        const a = ownerOf(o);
        const b = ownerOf(p);
        if (a) this.enqueue(a);
        if (b && b !== a) this.enqueue(b);
        if (!b) orphan?.(p);
        if (b && !o.metadata.deletionTimestamp && p.metadata.deletionTimestamp) expect.observedDelete(b);
      },
      onDelete: (p) => {
        const k = ownerOf(p);
        if (!k) return;
        if (!p.metadata.deletionTimestamp) expect.observedDelete(k);
        this.enqueue(k);
      },
    });
    return pods;
  }

  /**
   * Creates a pod from each of `items` in slow-start batches (1, 2, 4, …, as upstream's
   * slowStartBatch) so a template that cannot work fails after one try, not n. Each created pod
   * gets a SuccessfulCreate event; at the first failing batch the creates that will never be
   * observed (the failed and the skipped) are taken off `expect`, a FailedCreate event is written
   * and the first error thrown. Returns the created pods.
   */
  protected async createPodsInBatches<T>(owner: KubeObject, key: string, items: readonly T[], create: (item: T) => Promise<Pod>, expect: Expectations): Promise<Pod[]> {
    const created: Pod[] = [];
    for (let at = 0, batch = 1; at < items.length; at += batch, batch *= 2) {
      const results = await Promise.allSettled(items.slice(at, at + batch).map(create));
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      for (const r of results) {
        if (r.status !== 'fulfilled') continue;
        created.push(r.value);
        void this.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value.metadata.name}`);
      }
      if (failed.length) {
        expect.lowerAdd(key, failed.length + Math.max(0, items.length - at - batch));
        const err = failed[0]!.reason;
        void this.event(owner, 'Warning', 'FailedCreate', `Error creating: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    }
    return created;
  }

  /**
   * Deletes `victims` (pods `owner` controls) at once, each only while it is still that pod (uid
   * precondition). A deletion that fails will never be observed, so it comes off `expect`; a pod
   * already gone or replaced is no error. SuccessfulDelete per deletion; throws the first other error.
   */
  protected async deleteOwnedPods(owner: KubeObject, key: string, victims: readonly Pod[], expect: Expectations, signal: AbortSignal): Promise<void> {
    const pods = this.client.resource(PODS, owner.metadata.namespace);
    const results = await Promise.allSettled(victims.map((p) => pods.delete(p.metadata.name ?? '', { signal, preconditions: { uid: p.metadata.uid } })));
    let firstErr: unknown;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return void this.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${victims[i]!.metadata.name}`);
      expect.lowerDelete(key);
      if (!hasCode(r.reason, 'ERR_NOT_FOUND') && !hasCode(r.reason, 'ERR_CONFLICT')) firstErr ??= r.reason;
    });
    if (firstErr) throw firstErr;
  }

  /** Every `ms` once the workers run, enqueues `keys()`: for what changes with time, not with events. */
  protected every(ms: number, keys: () => Iterable<string>): void {
    this.#periodic.push({ ms, keys });
  }

  /** Writes an Event about `obj` (see EventRecorder); resolves once written or dropped, never rejects. */
  protected event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    return this.#recorder?.record(obj, type, reason, message) ?? Promise.resolve();
  }

  /** Called by runController once informers have synced: starts the periodic re-queues. */
  start(signal: AbortSignal): void {
    for (const p of this.#periodic) {
      let cancel = (): void => undefined;
      const tick = (): void => {
        if (signal.aborted) return;
        for (const k of p.keys()) this.enqueue(k);
        cancel = this.clock.setTimer(p.ms, tick);
      };
      cancel = this.clock.setTimer(p.ms, tick);
      this.#owned.add({ dispose: () => cancel() });
    }
  }

  /** Stops the queue, the periodic re-queues, the informer handlers and the event writer. Idempotent. */
  close(): void {
    this.queue.shutDown();
    this.#owned.dispose();
    this.#recorder?.close();
  }
}
