/**
 * The agent's PodSyncer (kubelet SyncPod / SyncTerminatingPod / SyncTerminatedPod): status first,
 * then runtime work, for the pod workers. Glue between the runtime (CRI), the PLEG cache, the status
 * manager and the static/mirror pod bookkeeping.
 *
 *   syncPod            probers ← cache · status ← (spec, cache, probe results) · terminal? → terminating · runtime.syncPod
 *                      (a failed liveness/startup probe kills and restarts the container there)
 *   syncTerminating    runtime.killPod(grace) · the pod's fresh state shows nothing running · status
 *   syncTerminated     deleted? → remove containers/sandboxes/volumes/logs · final status · API delete
 */
import { AgentError, describeError, type Clock, type Logger } from '@nodelet/base';
import type { ApiClient, Pod, PodStatus } from '@nodelet/api/agent';
import type { Pleg } from './pleg/pleg.js';
import type { PodEventSink } from './kubecontainer/events.js';
import type { PodRuntime } from './runtime/pod-runtime.js';
import type { ObservedPod } from './kubecontainer/observed.js';
import type { PodStatusFn } from './kubecontainer/pod-update.js';
import type { PodSyncResult, PodSyncer } from './podworkers/pod-worker.js';
import { activeDeadlineRemainingMs, computePodStatus, DEADLINE_EXCEEDED_MESSAGE, DEADLINE_EXCEEDED_REASON, isTerminalPhase, withApiConditions } from './status/pod-status.js';
import type { StatusManager } from './status/status-manager.js';
import { deleteMirrorPod, ensureMirrorPod } from './source/static-pods.js';
import { isStaticPod } from './kubecontainer/pod-update.js';
import type { ProbeManager } from './prober/prober.js';
import type { AgentPodJourneys } from './tracing/pod-journeys.js';
import type { WatchedObjects } from './source/watched-objects.js';

export interface PodLifecycleOptions {
  api: ApiClient;
  runtime: PodRuntime;
  pleg: Pleg;
  status: StatusManager;
  clock: Clock;
  log: Logger;
  hostIP: () => string;
  runtimeName: () => string;
  nodeUid: () => string | undefined;
  /** Whether the API still has this pod UID (false for orphans and force-deleted pods). */
  inApi(uid: string): boolean;
  /** Whether a static pod is still in the manifest directory. */
  staticDesired(uid: string): boolean;
  onPodStarted?(pod: Pod, seconds: number): void;
  /** Container probes; without it no probe runs and containers that declare a readiness/startup probe stay unready. */
  prober?: ProbeManager;
  /** Pod journey spans (docs/tracing.md): each starting sync, and when the pod runs and is Ready. */
  journeys?: AgentPodJourneys;
  /** Pod events the lifecycle itself records (DeadlineExceeded). */
  events?: PodEventSink;
  /** In-place resize (cm/pod-allocation.ts): the resources each pod runs with, and how its resize goes. */
  allocation?: PodAllocationView;
  /** The watches of the ConfigMaps and Secrets pods reference (strategy Watch): a pod counts from its first sync until it is terminated. */
  sources?: Pick<WatchedObjects, 'register' | 'unregister'>;
}

/** What the lifecycle uses of the allocation manager (cm/pod-allocation.ts). */
export interface PodAllocationView {
  allocate(pod: Pod): Pod;
  report(pod: Pod, status: PodStatus): void;
  podStopped(uid: string): void;
  forget(uid: string): void;
}

export class PodLifecycle implements PodSyncer {
  readonly #o: PodLifecycleOptions;
  readonly #started = new Set<string>();

  constructor(o: PodLifecycleOptions) {
    this.#o = o;
  }

  /** `statusFn` edits the computed status of a pod the agent stopped on its own (node shutdown). */
  #status(pod: Pod, observed: ObservedPod, terminating = false, statusFn?: PodStatusFn) {
    const uid = pod.metadata.uid!;
    const prev = withApiConditions(this.#o.status.getStatus(uid), pod.status);
    const status = computePodStatus({
      pod: { ...pod, status: prev },
      observed,
      failures: this.#o.runtime.failures(uid),
      hostIP: this.#o.hostIP(),
      runtimeName: this.#o.runtimeName(),
      now: this.#o.clock.now(),
      terminating,
      probes: this.#o.prober?.view,
    });
    this.#o.allocation?.report(pod, status);
    statusFn?.(status);
    this.#o.journeys?.statusComputed(pod, status);
    const target = isStaticPod(pod) ? { statusTarget: { name: pod.metadata.name!, namespace: pod.metadata.namespace! } } : {};
    this.#o.status.setStatus(pod, status, target);
    return status;
  }

  async syncPod(signal: AbortSignal, desired: Pod, observed: ObservedPod): Promise<PodSyncResult> {
    const uid = desired.metadata.uid!;
    // The resources the node allocated (a resize that does not fit yet waits), not always the spec's.
    const pod = this.#o.allocation?.allocate(desired) ?? desired;
    if (isStaticPod(pod)) {
      try {
        await ensureMirrorPod(this.#o.api, pod, signal, this.#o.nodeUid());
      } catch (err) {
        if (signal.aborted) throw err;
        this.#o.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, err: describeError(err) }, 'Mirror pod not created');
      }
    }
    // Before the runtime reads them for volumes and env. A static pod's sources stay read by GET:
    // the Node authorizer grants no watch for them (a mirror pod references none).
    if (!isStaticPod(pod)) this.#o.sources?.register(pod);
    this.#o.prober?.sync(pod, observed);
    const status = this.#status(pod, observed);
    if (isTerminalPhase(status.phase)) {
      if (status.reason === DEADLINE_EXCEEDED_REASON) this.#o.events?.event(pod, 'Normal', DEADLINE_EXCEEDED_REASON, DEADLINE_EXCEEDED_MESSAGE);
      this.#o.prober?.removePod(uid);
      return { terminal: true };
    }
    if (!this.#started.has(uid) && status.containerStatuses?.length && status.containerStatuses.every((c) => c.state?.running)) {
      this.#started.add(uid);
      const created = Date.parse(pod.metadata.creationTimestamp ?? '');
      if (Number.isFinite(created)) this.#o.onPodStarted?.(pod, Math.max(0, (this.#o.clock.now() - created) / 1000));
    }
    const failuresBefore = JSON.stringify([...this.#o.runtime.failures(uid)]);
    const view = this.#o.prober?.view;
    const sync = () => this.#o.runtime.syncPod(pod, observed, signal, view ? (id) => view.failed(id) : undefined, view ? (id, hasStartup) => view.started(id, hasStartup) : undefined);
    const r = await (this.#o.journeys ? this.#o.journeys.sync(uid, sync) : sync());
    // A new start failure (ErrImagePull, CrashLoopBackOff, …) is reported now, not a sync later.
    if (JSON.stringify([...this.#o.runtime.failures(uid)]) !== failuresBefore) this.#status(pod, observed);
    // changed: the worker syncs again at once on this pod's refreshed state (no wait for a relist).
    // A pod with an active deadline is looked at again when it passes (not at the next resync).
    const left = activeDeadlineRemainingMs(pod, status.startTime, this.#o.clock.now());
    // (A changed pod is synced again at once anyway: requeueAfterMs stays unset for it.)
    const requeueAfterMs = left === undefined || (r.changed && r.requeueAfterMs === undefined) ? r.requeueAfterMs : Math.min(r.requeueAfterMs ?? Infinity, Math.max(left, 0) + 50);
    return { terminal: false, requeueAfterMs, changed: r.changed };
  }

  /** The pod's state read from CRI from now on (a refresh of that pod, not the next relist). */
  #fresh(uid: string, signal: AbortSignal): Promise<ObservedPod> {
    return this.#o.pleg.getNewerThan(uid, this.#o.clock.now(), signal);
  }

  async syncTerminatingPod(signal: AbortSignal, pod: Pod, observed: ObservedPod, gracePeriodS: number, statusFn?: PodStatusFn): Promise<void> {
    const uid = pod.metadata.uid!;
    this.#o.prober?.removePod(uid);
    await this.#o.runtime.killPod(pod, observed, gracePeriodS, signal);
    this.#o.allocation?.podStopped(uid);
    const after = await this.#fresh(uid, signal);
    const still = after.containers.filter((c) => c.state === 'running');
    if (still.length > 0 || after.sandboxes.some((s) => s.ready)) {
      throw new AgentError('ERR_UNAVAILABLE', `pod "${pod.metadata.namespace}/${pod.metadata.name}" still has running containers [${still.map((c) => c.name).join(' ')}] after kill`);
    }
    if (this.#o.inApi(uid) || isStaticPod(pod)) this.#status(pod, after, true, statusFn);
  }

  async syncTerminatedPod(signal: AbortSignal, pod: Pod, deleted: boolean, statusFn?: PodStatusFn): Promise<void> {
    const uid = pod.metadata.uid!;
    this.#o.prober?.removePod(uid);
    // Nothing of a terminated pod reads its sources again (no container starts, no volume refresh).
    this.#o.sources?.unregister(uid);
    const observed = await this.#fresh(uid, signal);
    const inApi = this.#o.inApi(uid);
    if (!deleted) {
      // Finished by itself (Succeeded/Failed): containers stay for `kubectl logs` until deletion.
      if (inApi || isStaticPod(pod)) this.#status(pod, observed, true, statusFn);
      return;
    }
    await this.#o.runtime.removePod(pod, observed, signal);
    this.#o.runtime.forget(uid);
    this.#o.allocation?.forget(uid);
    this.#started.delete(uid);
    if (isStaticPod(pod)) {
      this.#o.status.forget(uid);
      if (!this.#o.staticDesired(uid)) await deleteMirrorPod(this.#o.api, pod, signal);
      return;
    }
    if (inApi && pod.metadata.deletionTimestamp) {
      this.#status(pod, observed, true, statusFn);
      this.#o.status.requestDelete(pod);
    } else {
      this.#o.status.forget(uid);
    }
  }
}
