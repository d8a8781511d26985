/**
 * The binding cycle, off the scheduling cycle (kube-scheduler runs one goroutine per pod for it):
 * once a pod is assumed in the cache, its PreBind (volumes) and Bind (`POST pods/<name>/binding`)
 * run here while the scheduler goes on with the next pod.
 *
 *   start() ─▶ PreBind: selected-node on WaitForFirstConsumer claims, wait until Bound (no slot held)
 *                 │
 *                 ▼
 *              Bind: POST pods/<name>/binding   (≤ bindConcurrency in flight; the rest wait their turn)
 *                 │ ok                    │ 404 / 409               │ other error
 *                 ▼                       ▼                         ▼
 *           outcome.bound           outcome.gone              outcome.failed (forget, backoff)
 *           + Scheduled event       (deleted, or bound        + FailedScheduling event
 *                                    by someone else)
 *
 * Events go to the shared EventRecorder of @nodelet/api, which queues them (bounded, oldest
 * dropped) and writes them one at a time: an event is never on the path of a binding, and a
 * burst of bindings does not turn into a burst of event writes competing with them.
 */
import { ANN_SELECTED_NODE, PERSISTENTVOLUMECLAIMS, PODS, rfc3339, type ApiClient, type EventRecorder, type EventType, type KubeObject, type Pod, type PodCondition } from '@nodelet/api';
import { AgentError, hasCode, isAbortError, pollUntil, Semaphore, type Clock, type Logger } from '@nodelet/base';
import { podVolumes, type VolumeLookup } from './volume-binding.js';
import type { SchedulerJourneySpans } from './journey-spans.js';

/** How long a pod's binding waits for its WaitForFirstConsumer claims to be provisioned (upstream bindTimeout). */
export const VOLUME_BIND_TIMEOUT_MS = 600_000;
/** Deadline of one binding call. */
export const BIND_CALL_TIMEOUT_MS = 30_000;

export interface BindTiming {
  /** From when the scheduler first saw the pod pending to the binding's success. */
  queuedToBoundMs: number;
  /** The `POST pods/<name>/binding` round trip alone. */
  bindCallMs: number;
  /** The scheduling cycle (filter, score, assume) of the attempt that bound the pod. */
  scheduleMs: number;
}

/** What the scheduler does with each binding's result (queue and cache bookkeeping). */
export interface BindingOutcome {
  bound(key: string, pod: Pod, node: string, timing: BindTiming): void;
  /** The pod was deleted, or bound by someone else: nothing to retry. */
  gone(key: string): void;
  /** Retry after backoff; the assumed pod must be forgotten. */
  failed(key: string): void;
}

export interface BindingCycleDeps {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  volumes: VolumeLookup;
  events: EventRecorder;
  bindConcurrency: number;
  outcome: BindingOutcome;
  /** The `scheduler.bind` span of each pod journey. */
  spans?: SchedulerJourneySpans;
}

export class BindingCycle {
  readonly #d: BindingCycleDeps;
  readonly #bindSlots: Semaphore;
  readonly #inflight = new Set<Promise<void>>();
  /** Aborted when the scheduler stops: volume waits end, queued bindings and events are skipped. */
  #stop: AbortSignal = new AbortController().signal;

  constructor(d: BindingCycleDeps) {
    this.#d = d;
    this.#bindSlots = new Semaphore(d.bindConcurrency);
  }

  setStopSignal(signal: AbortSignal): void {
    this.#stop = signal;
  }

  /** Binds an assumed pod in the background; the result reaches `outcome`. Never throws. */
  start(key: string, pod: Pod, node: string, t: { queuedAt: number; scheduleMs: number; tracedAt?: number }): void {
    this.#track(this.#bind(key, pod, node, t));
  }

  /**
   * FailedScheduling event and the PodScheduled=False condition, in the background; with
   * `nominatedNode` (a preemption made room there) `status.nominatedNodeName` too, null clears it.
   */
  reportUnschedulable(pod: Pod, message: string, nominatedNode?: string | null): void {
    this.#event(pod, 'Warning', 'FailedScheduling', message);
    this.#track(this.#setUnschedulableCondition(pod, message, nominatedNode));
  }

  /** Runs `work` in the background (a preemption's API calls); drain() waits for it. */
  background(work: Promise<void>): void {
    this.#track(work);
  }

  /** Records an event unless the scheduler is stopping. */
  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    this.#event(obj, type, reason, message);
  }

  /** Waits for in-flight bindings and status writes, then stops the event recorder (what it still queues is dropped). */
  async drain(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
    this.#d.events.close();
  }

  async #bind(key: string, pod: Pod, node: string, t: { queuedAt: number; scheduleMs: number; tracedAt?: number }): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    const name = pod.metadata.name ?? '';
    let bindCallMs = 0;
    // Epoch ms the pod journey's `scheduler.bind` span starts at: where its scheduling cycle's span ended.
    const bindStarted = t.tracedAt;
    try {
      // 1. PreBind: volumes. Waiting for a provisioner holds no binding slot.
      await this.#bindVolumes(pod, node, this.#stop);
      // 2. Bind.
      await this.#bindSlots.use(async () => {
        if (this.#stop.aborted) throw new AgentError('ERR_UNAVAILABLE', 'scheduler is stopping');
        const started = this.#d.clock.monotonic();
        await this.#d.client.create(
          PODS,
          { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: ns, uid: pod.metadata.uid }, target: { apiVersion: 'v1', kind: 'Node', name: node } },
          { namespace: ns, name, subresource: 'binding', signal: AbortSignal.timeout(BIND_CALL_TIMEOUT_MS) },
        );
        bindCallMs = this.#d.clock.monotonic() - started;
      });
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND') || hasCode(err, 'ERR_CONFLICT')) {
        this.#d.outcome.gone(key);
        return;
      }
      this.#d.outcome.failed(key);
      if (this.#stop.aborted) return;
      this.#d.logger.warn({ err, pod: key, node }, 'Binding failed, will retry');
      this.#event(pod, 'Warning', 'FailedScheduling', `Binding rejected: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const queuedToBoundMs = this.#d.clock.monotonic() - t.queuedAt;
    if (bindStarted !== undefined) this.#d.spans?.bound(pod, node, bindStarted);
    this.#d.outcome.bound(key, pod, node, { queuedToBoundMs, bindCallMs, scheduleMs: t.scheduleMs });
    this.#d.logger.debug({ pod: key, node }, 'Pod bound');
    this.#event(pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${node}`);
    // Nominated elsewhere by an earlier preemption: that claim is void now.
    const nominated = pod.status?.nominatedNodeName;
    if (nominated && nominated !== node) {
      await this.#d.client.resource(PODS, ns).patchStatus(name, { status: { nominatedNodeName: null } }, { type: 'merge', signal: AbortSignal.timeout(BIND_CALL_TIMEOUT_MS) })
        .catch((err: unknown) => this.#d.logger.debug({ err, pod: key }, 'Could not clear nominatedNodeName'));
    }
  }

  /**
   * PreBind of the VolumeBinding plugin: each WaitForFirstConsumer claim of the pod learns the
   * chosen node (`volume.kubernetes.io/selected-node`, so its provisioner creates the volume
   * there), then the binding waits until every claim is Bound.
   */
  async #bindVolumes(pod: Pod, node: string, signal: AbortSignal): Promise<void> {
    const { delayed } = podVolumes(pod, this.#d.volumes);
    if (delayed.length === 0) return;
    const claims = this.#d.client.resource(PERSISTENTVOLUMECLAIMS, pod.metadata.namespace);
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
      () => (delayed.every((c) => this.#d.volumes.claim(ns, c.metadata.name ?? '')?.status?.phase === 'Bound') ? true : undefined),
      { timeoutMs: VOLUME_BIND_TIMEOUT_MS, intervalMs: 100, signal },
    );
  }

  async #setUnschedulableCondition(pod: Pod, message: string, nominatedNode?: string | null): Promise<void> {
    const cur = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const nominationDone = nominatedNode === undefined || (pod.status?.nominatedNodeName ?? null) === nominatedNode;
    if (cur?.status === 'False' && cur.message === message && nominationDone) return;
    const now = rfc3339(this.#d.clock.now());
    const cond: PodCondition = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: now };
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'), cond];
    try {
      await this.#d.client.resource(PODS, pod.metadata.namespace).patchStatus(pod.metadata.name ?? '', { status: { conditions, ...(nominatedNode !== undefined ? { nominatedNodeName: nominatedNode } : {}) } }, { type: 'merge', signal: AbortSignal.timeout(BIND_CALL_TIMEOUT_MS) });
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) this.#d.logger.debug({ err, pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'Could not set PodScheduled condition');
    }
  }

  #event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    // Shutting down: events are dropped, as client-go's broadcaster does. record() never rejects.
    if (!this.#stop.aborted) void this.#d.events.record(obj, type, reason, message);
  }

  #track(p: Promise<void>): void {
    const t = p.catch((err) => this.#d.logger.warn({ err }, 'Scheduler background task failed')).finally(() => this.#inflight.delete(t));
    this.#inflight.add(t);
  }
}
