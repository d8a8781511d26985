/**
 * The scheduler loop: informers on pods and nodes feed the cache and the scheduling queue; one
 * cycle at a time pops a pod, runs the pure algorithm on the cache, assumes the pod on the chosen
 * node and binds it in the background (bounded concurrency), like kube-scheduler's
 * scheduleOne + async binding cycle.
 *
 *   informer(pods) ─┬─▶ cache (bound/assumed pods) ◀─┐
 *   informer(nodes)─┘         │                       │ assume / forget
 *          │ pending pods      ▼                       │
 *          └──────────▶ queue ──pop──▶ schedulePod ────┴──▶ POST pods/<p>/binding ──▶ Scheduled event
 *                         ▲                 │ no fit
 *                         └── backoff ◀─────┴──▶ FailedScheduling event + PodScheduled=False
 *
 * Only pods with `spec.schedulerName` = ours (default `default-scheduler`), no `spec.nodeName`
 * and no deletionTimestamp are scheduled. All API access goes through `@nodelet/api`.
 */
import { ANN_SELECTED_NODE, EventRecorder, Informer, NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, rfc3339, STORAGECLASSES, type ApiClient, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type PodCondition, type StorageClass } from '@nodelet/api';
import { AgentError, hasCode, isAbortError, pollUntil, Semaphore, systemClock, type Clock, type DisposableStore, type Logger } from '@nodelet/base';
import { DEFAULT_FILTERS, type FilterPlugin } from './filters.js';
import { podVolumes, volumeBindingFilter, type VolumeLookup } from './volume-binding.js';
import { schedulePod } from './algorithm.js';
import { SchedulerCache } from './cache.js';
import { SchedulingQueue } from './queue.js';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** How long a pod's binding waits for its WaitForFirstConsumer claims to be provisioned (upstream bindTimeout). */
export const VOLUME_BIND_TIMEOUT_MS = 600_000;

export interface SchedulerOptions {
  client: ApiClient;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  schedulerName?: string;
  /** Bindings in flight at once (default 16). */
  bindConcurrency?: number;
  /** Called after each successful binding (for benchmarks and metrics). */
  onBound?: (pod: Pod, node: string, timing: BindTiming) => void;
}

export interface BindTiming {
  /** From when the scheduler first saw the pod pending to the binding's success. */
  queuedToBoundMs: number;
  /** The `POST pods/<name>/binding` round trip alone. */
  bindCallMs: number;
}

const keyOf = (p: Pod): string => `${p.metadata.namespace}/${p.metadata.name}`;

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #name: string;
  readonly #cache = new SchedulerCache();
  readonly #queue: SchedulingQueue;
  readonly #pods: Informer<Pod>;
  readonly #nodes: Informer<Node>;
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #volumes: Informer<PersistentVolume>;
  readonly #classes: Informer<StorageClass>;
  readonly #volumeLookup: VolumeLookup;
  readonly #filters: readonly FilterPlugin[];
  readonly #events: EventRecorder;
  readonly #binds: Semaphore;
  readonly #inflight = new Set<Promise<void>>();
  /** Aborted when run() ends: in-flight volume binding waits stop then. */
  #runSignal: AbortSignal = new AbortController().signal;
  /** When each pending pod was first seen (monotonic ms), for the binding latency. */
  readonly #firstSeen = new Map<string, number>();

  constructor(o: SchedulerOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#log = o.logger.child({ component: 'scheduler' });
    this.#name = o.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.#queue = new SchedulingQueue(this.#clock);
    this.#pods = new Informer({ client: o.client, resource: PODS, clock: this.#clock, logger: o.logger });
    this.#nodes = new Informer({ client: o.client, resource: NODES, clock: this.#clock, logger: o.logger });
    this.#claims = new Informer({ client: o.client, resource: PERSISTENTVOLUMECLAIMS, clock: this.#clock, logger: o.logger });
    this.#volumes = new Informer({ client: o.client, resource: PERSISTENTVOLUMES, clock: this.#clock, logger: o.logger });
    this.#classes = new Informer({ client: o.client, resource: STORAGECLASSES, clock: this.#clock, logger: o.logger });
    this.#volumeLookup = {
      claim: (ns, name) => this.#claims.get(`${ns}/${name}`),
      volume: (name) => this.#volumes.get(name),
      storageClass: (name) => this.#classes.get(name),
    };
    this.#filters = [...DEFAULT_FILTERS, volumeBindingFilter(this.#volumeLookup)];
    this.#events = new EventRecorder({ client: o.client, component: this.#name, clock: this.#clock, logger: this.#log });
    this.#binds = new Semaphore(o.bindConcurrency ?? 16);
  }

  get queueSizes(): SchedulingQueue['sizes'] {
    return this.#queue.sizes;
  }

  #responsible(p: Pod): boolean {
    return (p.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) === this.#name && !p.spec?.nodeName && !p.metadata.deletionTimestamp;
  }

  #onPod(p: Pod, old?: Pod): void {
    const key = keyOf(p);
    this.#cache.setPod(key, p);
    if (this.#responsible(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') {
      if (!this.#firstSeen.has(key)) this.#firstSeen.set(key, this.#clock.monotonic());
      // Our own status write (PodScheduled=False) must not re-activate the pod.
      if (!old || JSON.stringify(old.spec) !== JSON.stringify(p.spec) || JSON.stringify(old.metadata.labels) !== JSON.stringify(p.metadata.labels)) {
        this.#queue.addOrUpdate(key);
      }
      return;
    }
    this.#queue.delete(key);
    this.#firstSeen.delete(key);
    // A bound pod finishing frees its resources.
    if (old?.spec?.nodeName && (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') && old.status?.phase !== p.status?.phase) {
      this.#queue.moveAllToActiveOrBackoff();
    }
  }

  #onPodDeleted(p: Pod): void {
    const key = keyOf(p);
    this.#cache.deletePod(key);
    this.#queue.delete(key);
    this.#firstSeen.delete(key);
    if (p.spec?.nodeName) this.#queue.moveAllToActiveOrBackoff();
  }

  #onNode(n: Node, old?: Node): void {
    this.#cache.setNode(n);
    const relevant = (x: Node | undefined): string =>
      JSON.stringify([x?.metadata.labels, x?.spec?.taints, x?.spec?.unschedulable, x?.status?.allocatable]);
    if (!old || relevant(old) !== relevant(n)) this.#queue.moveAllToActiveOrBackoff();
  }

  /** Runs until `signal` aborts; resolves after in-flight bindings settle. */
  async run(signal: AbortSignal, store: DisposableStore): Promise<void> {
    this.#runSignal = signal;
    store.add(this.#pods.on({ onAdd: (p) => this.#onPod(p), onUpdate: (o, p) => this.#onPod(p, o), onDelete: (p) => this.#onPodDeleted(p) }));
    store.add(this.#nodes.on({ onAdd: (n) => this.#onNode(n), onUpdate: (o, n) => this.#onNode(n, o), onDelete: (n) => { this.#cache.deleteNode(n.metadata.name ?? ''); } }));
    // A claim or volume that appears or binds can make a waiting pod schedulable.
    const wake = (): void => this.#queue.moveAllToActiveOrBackoff();
    store.add(this.#claims.on({ onAdd: wake, onUpdate: wake }));
    store.add(this.#volumes.on({ onAdd: wake, onUpdate: wake }));
    const volumeInformers = [this.#claims, this.#volumes, this.#classes];
    this.#nodes.start();
    this.#pods.start();
    for (const i of volumeInformers) i.start();
    try {
      await Promise.all([this.#nodes.waitForSync(signal), this.#pods.waitForSync(signal), ...volumeInformers.map((i) => i.waitForSync(signal))]);
      this.#log.info({ nodes: this.#cache.nodeCount }, 'Scheduler started');
      for (;;) {
        const key = await this.#queue.pop(signal);
        this.#scheduleOne(key);
      }
    } catch (err) {
      if (!isAbortError(err) || !signal.aborted) throw err;
    } finally {
      await Promise.allSettled([...this.#inflight]);
      await Promise.all([this.#pods.close(), this.#nodes.close(), ...volumeInformers.map((i) => i.close())]);
    }
  }

  #scheduleOne(key: string): void {
    const pod = this.#pods.get(key);
    if (!pod || !this.#responsible(pod) || this.#cache.isAssumed(key)) {
      this.#queue.done(key);
      return;
    }
    const result = schedulePod(pod, this.#cache.nodeInfos(), { random: this.#o.random, filters: this.#filters });
    if (!result.ok) {
      this.#log.debug({ pod: key, message: result.message }, 'Pod is unschedulable');
      this.#queue.failed(key, true);
      this.#track(this.#reportUnschedulable(pod, result.message));
      return;
    }
    this.#cache.assume(key, pod, result.node);
    const queuedAt = this.#firstSeen.get(key) ?? this.#clock.monotonic();
    this.#track(this.#binds.use(() => this.#bind(key, pod, result.node, queuedAt, this.#runSignal)));
  }

  /**
   * PreBind of the VolumeBinding plugin: each WaitForFirstConsumer claim of the pod learns the
   * chosen node (`volume.kubernetes.io/selected-node`, so its provisioner creates the volume
   * there), then the binding waits until every claim is Bound.
   */
  async #bindVolumes(pod: Pod, node: string, signal: AbortSignal): Promise<void> {
    const { delayed } = podVolumes(pod, this.#volumeLookup);
    if (delayed.length === 0) return;
    const claims = this.#o.client.resource(PERSISTENTVOLUMECLAIMS, pod.metadata.namespace);
    for (const pvc of delayed) {
      if (pvc.metadata.annotations?.[ANN_SELECTED_NODE] === node) continue;
      try {
        await claims.update({ ...pvc, metadata: { ...pvc.metadata, annotations: { ...pvc.metadata.annotations, [ANN_SELECTED_NODE]: node } } }, { signal });
      } catch (err) {
        // A stale or vanished claim is no conflict on the pod: the pod is retried, not dropped.
        if (isAbortError(err)) throw err;
        throw new AgentError('ERR_UNAVAILABLE', `binding volumes: claim "${pvc.metadata.name}": ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    }
    const ns = pod.metadata.namespace ?? 'default';
    await pollUntil(
      'claims bound',
      () => (delayed.every((c) => this.#claims.get(`${ns}/${c.metadata.name}`)?.status?.phase === 'Bound') ? true : undefined),
      { timeoutMs: VOLUME_BIND_TIMEOUT_MS, intervalMs: 100, signal },
    );
  }

  #track(p: Promise<void>): void {
    const t = p.catch((err) => this.#log.warn({ err }, 'Scheduler background task failed')).finally(() => this.#inflight.delete(t));
    this.#inflight.add(t);
  }

  async #bind(key: string, pod: Pod, node: string, queuedAt: number, stop: AbortSignal): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    const name = pod.metadata.name ?? '';
    const started = this.#clock.monotonic();
    try {
      await this.#bindVolumes(pod, node, stop);
      await this.#o.client.create(
        PODS,
        { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: ns, uid: pod.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: node } },
        { namespace: ns, name, subresource: 'binding', signal: AbortSignal.timeout(30_000) },
      );
    } catch (err) {
      this.#cache.forget(key);
      if (hasCode(err, 'ERR_NOT_FOUND') || hasCode(err, 'ERR_CONFLICT')) {
        // Deleted, or bound by someone else meanwhile: nothing to retry.
        this.#queue.done(key);
        return;
      }
      this.#log.warn({ err, pod: key, node }, 'Binding failed, will retry');
      this.#queue.failed(key, false);
      await this.#events.record(pod, 'Warning', 'FailedScheduling', `Binding rejected: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.#queue.done(key);
    this.#firstSeen.delete(key);
    const end = this.#clock.monotonic();
    this.#o.onBound?.(pod, node, { queuedToBoundMs: end - queuedAt, bindCallMs: end - started });
    this.#log.debug({ pod: key, node }, 'Pod bound');
    await this.#events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${node}`);
  }

  async #reportUnschedulable(pod: Pod, message: string): Promise<void> {
    await this.#events.record(pod, 'Warning', 'FailedScheduling', message);
    const cur = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (cur?.status === 'False' && cur.message === message) return;
    const cond: PodCondition = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: rfc3339(this.#clock.now()) };
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'), cond];
    try {
      await this.#o.client.resource(PODS, pod.metadata.namespace).patchStatus(pod.metadata.name ?? '', { status: { conditions } }, { type: 'merge', signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) this.#log.debug({ err, pod: keyOf(pod) }, 'Could not set PodScheduled condition');
    }
  }
}
