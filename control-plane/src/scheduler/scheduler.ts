/**
 * The scheduler loop, after kube-scheduler's scheduleOne: informers on pods and nodes keep the
 * cache (the incremental snapshot) and the scheduling queue current; the scheduling cycle pops
 * one pod, runs the algorithm on the cache, assumes the pod on the chosen node and returns at
 * once; the binding cycle (PreBind for volumes, then `POST pods/<p>/binding`) runs on its own,
 * with a bounded number of binding calls in flight, while the next pods are scheduled.
 *
 *   informer(pods) ─┬─▶ cache: NodeInfos + assumed pods ◀──────── assume / forget / finishBinding
 *   informer(nodes)─┘                 │ (read synchronously)                         │
 *          │ pending pods              ▼                                              │
 *          └───────▶ queue ──pop──▶ scheduling cycle ──assume──▶ binding cycle ───────┘
 *                      ▲                │ no fit                   │ PreBind (volumes), Bind (≤ bindConcurrency)
 *                      │                ▼                          ├─ ok ──▶ Scheduled event (bounded event sink)
 *                      └──── backoff ◀──┴── FailedScheduling ◀─────┘ error: forget, back to the queue
 *
 * The event loop is shared with everything else in the process (in `nodelet server`, the API
 * server itself), so the loop schedules for a slice of {@link SCHEDULING_SLICE_MS} and then
 * yields: binding replies and watch events are handled between slices instead of after the
 * whole backlog.
 *
 * Only pods with `spec.schedulerName` = ours (default `default-scheduler`), no `spec.nodeName`
 * and no deletionTimestamp are scheduled. All API access goes through `@nodelet/api`.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  EventRecorder, Informer, NAMESPACES, NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODDISRUPTIONBUDGETS, PODS, REPLICASETS, SERVICES, STATEFULSETS, STORAGECLASSES,
  type ApiClient, type Namespace, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type PodDisruptionBudget, type ReplicaSet, type Service, type StatefulSet, type StorageClass,
} from '@nodelet/api';
import { errCode, isAbortError, systemClock, type Clock, type DisposableStore, type Logger, type PeriodicJob } from '@nodelet/base';
import { schedulePod } from './algorithm.js';
import { BindingCycle, type BindTiming } from './binding-cycle.js';
import { SchedulerCache } from './cache.js';
import type { NamespaceLookup } from './cluster-view.js';
import { DEFAULT_FILTERS, type FilterPlugin } from './filters.js';
import { imageLocalityScore } from './image-locality.js';
import { interPodAffinityFilter, interPodAffinityScore } from './inter-pod-affinity.js';
import { isTerminal } from './node-info.js';
import { podAffinityInfo, termMatches } from './pod-affinity.js';
import { Nominator } from './nominator.js';
import { newPodInfo, podKey, podPriority } from './pod-info.js';
import { podRequests } from './resources.js';
import { carryOutPreemption } from './preemption-actions.js';
import type { Candidate } from './preemption.js';
import { SchedulingQueue } from './queue.js';
import type { ScorePlugin } from './scores.js';
import { podTopologySpreadFilter, podTopologySpreadScore } from './topology-spread.js';
import { WorkloadSelectors } from './workload-selectors.js';
import { volumeBindingFilter, type VolumeLookup } from './volume-binding.js';
import type { JourneyTracer } from '@nodelet/api/tracing';
import { SchedulerJourneySpans } from './journey-spans.js';

export type { BindTiming } from './binding-cycle.js';
export { VOLUME_BIND_TIMEOUT_MS } from './binding-cycle.js';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/**
 * How long the loop schedules back to back before it lets the rest of the process run (binding
 * replies, watch events; in `nodelet server` the API server too). Yielding after every cycle
 * would tie throughput to the event loop's turn rate; never yielding would hold binding replies
 * back until the whole backlog is scheduled.
 */
export const SCHEDULING_SLICE_MS = 5;
/** Upstream cleanAssumedPeriod: how often expired assumed pods are looked for. */
export const CLEAN_ASSUMED_PERIOD_MS = 1_000;
/**
 * Default TTL of an assumed pod whose binding finished but which the informer has not reported
 * bound. kube-scheduler used 15 min and has used 0 (never) since kubernetes/kubernetes#106361;
 * we keep 15 min as a safety net against a lost watch event holding a node's resources forever.
 */
/** Whether a pod now requests less of some resource than before (its requests count status too, resources.ts). */
function scaledDown(old: Pod, p: Pod): boolean {
  try {
    const a = podRequests(old);
    const b = podRequests(p);
    return b.milliCPU < a.milliCPU || b.memory < a.memory || b.ephemeralStorage < a.ephemeralStorage;
  } catch {
    return false;
  }
}

export const DEFAULT_ASSUMED_POD_TTL_MS = 15 * 60_000;

export interface SchedulerOptions {
  client: ApiClient;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  schedulerName?: string;
  /** `POST pods/<name>/binding` calls in flight at once (default 16). */
  bindConcurrency?: number;
  /** kube-scheduler's percentageOfNodesToScore; unset or 0 = the adaptive default, 100 = all nodes. */
  percentageOfNodesToScore?: number;
  /** See {@link DEFAULT_ASSUMED_POD_TTL_MS}; 0 = assumed pods never expire. */
  assumedPodTtlMs?: number;
  /** Called after each successful binding (for benchmarks and metrics). */
  onBound?: (pod: Pod, node: string, timing: BindTiming) => void;
  /** Records the scheduler's steps of each pod journey (journey-spans.ts). */
  tracer?: JourneyTracer;
}

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #name: string;
  readonly #cache: SchedulerCache;
  readonly #queue: SchedulingQueue;
  readonly #pods: Informer<Pod>;
  readonly #nodes: Informer<Node>;
  readonly #claims: Informer<PersistentVolumeClaim>;
  readonly #volumes: Informer<PersistentVolume>;
  readonly #classes: Informer<StorageClass>;
  readonly #namespaces: Informer<Namespace>;
  readonly #services: Informer<Service>;
  readonly #replicaSets: Informer<ReplicaSet>;
  readonly #statefulSets: Informer<StatefulSet>;
  readonly #pdbs: Informer<PodDisruptionBudget>;
  /** Pending pods with a nominatedNodeName: their claim counts when others are filtered. */
  readonly #nominator = new Nominator();
  readonly #workloads = new WorkloadSelectors();
  readonly #filters: readonly FilterPlugin[];
  readonly #scorers: readonly ScorePlugin[];
  readonly #binding: BindingCycle;
  /** Where the next cycle's filtering starts in the node list (upstream nextStartNodeIndex). */
  #nextStartNodeIndex = 0;
  /** When each pending pod was first seen (monotonic ms), for the binding latency. */
  readonly #firstSeen = new Map<string, number>();
  readonly #spans: SchedulerJourneySpans | undefined;

  constructor(o: SchedulerOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#log = o.logger.child({ component: 'scheduler' });
    this.#name = o.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.#cache = new SchedulerCache({ clock: this.#clock, assumedPodTtlMs: o.assumedPodTtlMs ?? DEFAULT_ASSUMED_POD_TTL_MS });
    this.#queue = new SchedulingQueue(this.#clock);
    const common = { client: o.client, clock: this.#clock, logger: o.logger };
    this.#pods = new Informer({ ...common, resource: PODS });
    this.#nodes = new Informer({ ...common, resource: NODES });
    this.#claims = new Informer({ ...common, resource: PERSISTENTVOLUMECLAIMS });
    this.#volumes = new Informer({ ...common, resource: PERSISTENTVOLUMES });
    this.#classes = new Informer({ ...common, resource: STORAGECLASSES });
    const volumes: VolumeLookup = {
      claim: (ns, name) => this.#claims.get(`${ns}/${name}`),
      volume: (name) => this.#volumes.get(name),
      storageClass: (name) => this.#classes.get(name),
    };
    this.#namespaces = new Informer({ ...common, resource: NAMESPACES });
    this.#services = new Informer({ ...common, resource: SERVICES });
    this.#replicaSets = new Informer({ ...common, resource: REPLICASETS });
    this.#statefulSets = new Informer({ ...common, resource: STATEFULSETS });
    this.#pdbs = new Informer({ ...common, resource: PODDISRUPTIONBUDGETS });
    const namespaces: NamespaceLookup = {
      labels: (ns) => this.#namespaces.get(ns)?.metadata.labels,
      all: () => this.#namespaces.list().map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}] as const),
    };
    // Default profile order: ..., VolumeBinding, PodTopologySpread, InterPodAffinity.
    this.#filters = [...DEFAULT_FILTERS, volumeBindingFilter(volumes), podTopologySpreadFilter(this.#cache), interPodAffinityFilter(this.#cache, namespaces)];
    this.#scorers = [interPodAffinityScore(this.#cache, namespaces), podTopologySpreadScore(this.#cache, this.#workloads), imageLocalityScore(this.#cache)];
    this.#spans = o.tracer ? new SchedulerJourneySpans(o.tracer, this.#clock) : undefined;
    this.#binding = new BindingCycle({
      client: o.client,
      clock: this.#clock,
      logger: this.#log,
      volumes,
      events: new EventRecorder({ client: o.client, component: this.#name, clock: this.#clock, logger: this.#log }),
      bindConcurrency: o.bindConcurrency ?? 16,
      ...(this.#spans ? { spans: this.#spans } : {}),
      outcome: {
        bound: (key, pod, node, timing) => {
          this.#cache.finishBinding(key);
          this.#queue.done(key);
          this.#firstSeen.delete(key);
          this.#o.onBound?.(pod, node, timing);
        },
        gone: (key) => {
          this.#cache.forget(key);
          this.#queue.done(key);
        },
        failed: (key) => {
          // The pod's resources on the node are free again (upstream treats it as an assigned pod deleted).
          if (this.#cache.forget(key)) this.#queue.moveAllToActiveOrBackoff();
          this.#queue.failed(key, false);
        },
      },
    });
  }

  get queueSizes(): SchedulingQueue['sizes'] {
    return this.#queue.sizes;
  }

  #responsible(p: Pod): boolean {
    return (p.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) === this.#name && !p.spec?.nodeName && !p.metadata.deletionTimestamp;
  }

  #onPod(p: Pod, old?: Pod): void {
    const key = podKey(p);
    this.#updateCache(key, p);
    this.#updateNomination(key, p, old);
    // A pod that lands, or a bound pod whose labels change, can satisfy a waiting pod's required
    // affinity or lift its spread's global minimum: those pods are retried (upstream AssignedPodAdd).
    if (p.spec?.nodeName && !isTerminal(p) && (!old?.spec?.nodeName || JSON.stringify(old.metadata.labels) !== JSON.stringify(p.metadata.labels))) {
      this.#wakeFor(p);
    }
    if (this.#responsible(p) && !isTerminal(p) && isGated(p)) {
      // Upstream's SchedulingGates PreEnqueue: never attempted until the gates are removed (an update re-enqueues it).
      this.#queue.delete(key);
      this.#firstSeen.delete(key);
      return;
    }
    if (this.#responsible(p) && !isTerminal(p)) {
      if (!this.#firstSeen.has(key)) this.#firstSeen.set(key, this.#clock.monotonic());
      // Our own status write (PodScheduled=False) must not re-activate the pod.
      if (!old || JSON.stringify(old.spec) !== JSON.stringify(p.spec) || JSON.stringify(old.metadata.labels) !== JSON.stringify(p.metadata.labels)) {
        this.#queue.addOrUpdate(key, podPriority(p));
      }
      return;
    }
    this.#queue.delete(key);
    this.#firstSeen.delete(key);
    // A bound pod finishing frees its resources, and so does one resized in place to less
    // (upstream's AssignedPodUpdate with UpdatePodScaleDown).
    if (old?.spec?.nodeName && isTerminal(p) && old.status?.phase !== p.status?.phase) this.#queue.moveAllToActiveOrBackoff();
    else if (old?.spec?.nodeName && p.spec?.nodeName && !isTerminal(p) && scaledDown(old, p)) this.#queue.moveAllToActiveOrBackoff();
  }

  /** Bound, running pods count on their node; terminal ones free it; pending ones count only while assumed. */
  #updateCache(key: string, p: Pod): void {
    if (isTerminal(p)) return this.#cache.removePod(key);
    if (!p.spec?.nodeName) {
      // Unbound: nothing to count, unless we assumed it (the informer has not caught up yet).
      if (!this.#cache.isAssumed(key)) this.#cache.removePod(key);
      return;
    }
    try {
      this.#cache.addOrUpdatePod(newPodInfo(p, key));
    } catch (err) {
      // The API server validates quantities, so this is a pod we cannot account for; say so once per update.
      this.#log.warn({ err, code: errCode(err), pod: key }, 'Bound pod not counted');
    }
  }

  /** A pending pod of ours with status.nominatedNodeName holds its claim (upstream's nominator follows the queue's pods). */
  #updateNomination(key: string, p: Pod, old?: Pod): void {
    const node = p.status?.nominatedNodeName;
    if (!this.#responsible(p) || isTerminal(p) || this.#cache.isAssumed(key)) return this.#nominator.remove(key);
    // An update that neither sets nor clears the field keeps our own nomination (its write may still be in flight).
    if (!node) return old?.status?.nominatedNodeName ? this.#nominator.remove(key) : undefined;
    if (this.#nominator.nodeOf(key) === node) return;
    try {
      this.#nominator.add(newPodInfo(p, key), node);
    } catch {
      this.#nominator.remove(key); // a pod we cannot account for claims nothing
    }
  }

  #wakeFor(bound: Pod): void {
    if (this.#queue.sizes.unschedulable === 0) return;
    const landed = { namespace: bound.metadata.namespace ?? 'default', labels: bound.metadata.labels ?? {} };
    const nsLabels = this.#namespaces.get(landed.namespace)?.metadata.labels;
    this.#queue.moveToActiveOrBackoff((key) => {
      const waiting = this.#pods.get(key);
      if (!waiting) return false;
      const spread = waiting.spec?.topologySpreadConstraints?.some((c) => c.whenUnsatisfiable === 'DoNotSchedule');
      if (spread && (waiting.metadata.namespace ?? 'default') === landed.namespace) return true;
      const terms = waiting.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
      if (!terms?.length) return false;
      try {
        return podAffinityInfo(waiting)?.requiredAffinity.some((t) => termMatches(t, landed, nsLabels)) ?? false;
      } catch {
        return false; // a selector that does not parse never matches
      }
    });
  }

  #onPodDeleted(p: Pod): void {
    const key = podKey(p);
    this.#cache.removePod(key);
    this.#nominator.remove(key);
    this.#queue.delete(key);
    this.#firstSeen.delete(key);
    if (p.spec?.nodeName) this.#queue.moveAllToActiveOrBackoff();
  }

  #onNode(n: Node, old?: Node): void {
    this.#cache.addOrUpdateNode(n);
    const relevant = (x: Node | undefined): string =>
      JSON.stringify([x?.metadata.labels, x?.spec?.taints, x?.spec?.unschedulable, x?.status?.allocatable]);
    if (!old || relevant(old) !== relevant(n)) this.#queue.moveAllToActiveOrBackoff();
  }

  /** Runs until `signal` aborts; resolves after in-flight bindings settle. */
  async run(signal: AbortSignal, store: DisposableStore): Promise<void> {
    this.#binding.setStopSignal(signal);
    store.add(this.#pods.on({ onAdd: (p) => this.#onPod(p), onUpdate: (o, p) => this.#onPod(p, o), onDelete: (p) => this.#onPodDeleted(p) }));
    store.add(this.#nodes.on({ onAdd: (n) => this.#onNode(n), onUpdate: (o, n) => this.#onNode(n, o), onDelete: (n) => this.#cache.removeNode(n.metadata.name ?? '') }));
    // A claim or volume that appears or binds can make a waiting pod schedulable.
    const wake = (): void => this.#queue.moveAllToActiveOrBackoff();
    store.add(this.#claims.on({ onAdd: wake, onUpdate: wake }));
    store.add(this.#volumes.on({ onAdd: wake, onUpdate: wake }));
    store.add(this.#namespaces.on({ onAdd: wake, onUpdate: (o, n) => JSON.stringify(o.metadata.labels) !== JSON.stringify(n.metadata.labels) && wake() }));
    const workloads = (kind: 'svc' | 'rs' | 'sts') => ({
      onAdd: (o: Service | ReplicaSet | StatefulSet) => this.#workloads.set(kind, o),
      onUpdate: (_: unknown, o: Service | ReplicaSet | StatefulSet) => this.#workloads.set(kind, o),
      onDelete: (o: Service | ReplicaSet | StatefulSet) => this.#workloads.delete(kind, o),
    });
    store.add(this.#services.on(workloads('svc')));
    store.add(this.#replicaSets.on(workloads('rs')));
    store.add(this.#statefulSets.on(workloads('sts')));
    const informers = [this.#nodes, this.#pods, this.#claims, this.#volumes, this.#classes, this.#namespaces, this.#services, this.#replicaSets, this.#statefulSets, this.#pdbs];
    for (const i of informers) i.start();
    const cleanup = this.#startAssumedPodCleanup(signal);
    try {
      // One at a time: each wait holds a listener on `signal` until its informer syncs, and ten at
      // once beside the scheduler's own passed Node's listener limit (a false leak warning).
      for (const i of informers) await i.waitForSync(signal);
      this.#log.info({ nodes: this.#cache.nodeCount }, 'Scheduler started');
      for (;;) {
        // Cycles back to back for one time slice, then binding replies and watch events get their turn.
        const sliceEnd = this.#clock.monotonic() + SCHEDULING_SLICE_MS;
        for (let key: string | undefined = await this.#queue.pop(signal); key !== undefined; key = this.#queue.tryPop()) {
          this.#scheduleOne(key);
          if (this.#clock.monotonic() >= sliceEnd) break;
        }
        await yieldToEventLoop();
      }
    } catch (err) {
      if (!isAbortError(err) || !signal.aborted) throw err;
    } finally {
      cleanup.dispose();
      await this.#binding.drain();
      await Promise.all(informers.map((i) => i.close()));
    }
  }

  /** The scheduling cycle: synchronous from reading the cache to assuming the pod in it. */
  #scheduleOne(key: string): void {
    const pod = this.#pods.get(key);
    if (!pod || !this.#responsible(pod) || isGated(pod) || this.#cache.isAssumed(key)) {
      this.#queue.done(key);
      return;
    }
    const started = this.#clock.monotonic();
    let result: ReturnType<typeof schedulePod>;
    try {
      const info = newPodInfo(pod, key);
      result = schedulePod(info, this.#cache, {
        random: this.#o.random,
        filters: this.#filters,
        scorers: this.#scorers,
        percentageOfNodesToScore: this.#o.percentageOfNodesToScore,
        startIndex: this.#nextStartNodeIndex,
        nominated: this.#nominator.forNode,
        nominatedNode: this.#nominator.nodeOf(key),
        pdbs: this.#pdbs.list(),
      });
      if (result.ok) {
        this.#cache.assume(info, result.node);
        this.#nominator.remove(key);
      } else if (result.preemption) {
        // Claimed at once, so the pods scheduled before the victims are gone cannot take the room.
        this.#nominator.add(info, result.preemption.node);
      }
    } catch (err) {
      // An error, not a verdict: retry after backoff (upstream's Error status).
      this.#log.warn({ err, code: errCode(err), pod: key }, 'Scheduling attempt failed');
      this.#queue.failed(key, false);
      return;
    }
    const nodes = this.#cache.nodeCount;
    if (nodes > 0) this.#nextStartNodeIndex = (this.#nextStartNodeIndex + result.processed) % nodes;
    if (!result.ok) {
      this.#log.debug({ pod: key, message: result.message }, 'Pod is unschedulable');
      this.#queue.failed(key, true);
      if (result.preemption) this.#preempt(pod, result.preemption);
      let nomination: string | null | undefined = result.preemption?.node;
      if (result.clearNomination && (pod.status?.nominatedNodeName || this.#nominator.nodeOf(key) !== undefined)) {
        this.#nominator.remove(key);
        nomination = null;
      }
      this.#binding.reportUnschedulable(pod, result.message, nomination);
      return;
    }
    const scheduleMs = this.#clock.monotonic() - started;
    const tracedAt = this.#spans?.scheduled(pod, result.node, this.#firstSeen.get(key) ?? started, started);
    this.#binding.start(key, pod, result.node, { queuedAt: this.#firstSeen.get(key) ?? started, scheduleMs, ...(tracedAt !== undefined ? { tracedAt } : {}) });
  }

  /** Evicts the victims in the background; pods of lower priority nominated to the node lose the claim. */
  #preempt(pod: Pod, c: Candidate): void {
    const prio = podPriority(pod);
    const lower = this.#nominator.forNode(c.node).filter((p) => p.priority < prio);
    for (const p of lower) this.#nominator.remove(p.key);
    this.#log.info({ pod: podKey(pod), node: c.node, victims: c.victims.map((v) => v.key), pdbViolations: c.numPDBViolations }, 'Preempting');
    const deps = { client: this.#o.client, clock: this.#clock, logger: this.#log, schedulerName: this.#name, event: this.#binding.event.bind(this.#binding) };
    this.#binding.background(carryOutPreemption(deps, pod, c, lower.map((p) => p.pod)));
  }

  /** Upstream's cleanupAssumedPods loop: drops assumed pods the informer never confirmed. */
  #startAssumedPodCleanup(signal: AbortSignal): PeriodicJob {
    return this.#clock.every(
      CLEAN_ASSUMED_PERIOD_MS,
      () => {
        const expired = this.#cache.cleanupExpired();
        for (const key of expired) this.#log.warn({ pod: key }, 'Assumed pod expired without being reported bound');
        // Their resources are free again.
        if (expired.length > 0) this.#queue.moveAllToActiveOrBackoff();
      },
      { signal, onError: (err) => this.#log.warn({ err }, 'Assumed pod cleanup failed') },
    );
  }

}

/** The pod has scheduling gates: it is not scheduled until they are all removed. */
export function isGated(p: Pod): boolean {
  return (p.spec?.schedulingGates?.length ?? 0) > 0;
}
