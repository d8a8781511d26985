/**
 * One worker per pod UID (kubelet pod_workers.go). Operations on one pod never overlap; only the
 * latest update is kept; phases only move forward:
 *
 *   sync ──(deleted, killed, or terminal phase)──▶ terminating ──▶ terminated ──▶ finished
 *
 * `update()` is synchronous and never awaits. A termination request preempts an in-flight
 * syncPod through its AbortSignal (linkAbort child of the worker's stop signal). After each pass
 * the worker requeues itself: phase change → at once; a sync that changed the runtime → at once
 * (the next pass reads that pod's fresh state from the cache, which refreshes it without waiting
 * for the next relist); success → resync with jitter (or the syncer's backoff hint); error →
 * backoff with jitter.
 */
import { channel } from 'node:diagnostics_channel';
import { Backoff, Wakeup, errCode, isAbortError, jitter, linkAbort, describeError, type Clock, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { ObservedPod } from '../kubecontainer/observed.js';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';

export type WorkerPhase = 'sync' | 'terminating' | 'terminated' | 'finished';

const NEXT: { readonly [P in WorkerPhase]: readonly WorkerPhase[] } = {
  sync: ['terminating'],
  terminating: ['terminated'],
  terminated: ['finished'],
  finished: [],
};

export interface PodUpdate {
  pod: Pod;
  /** The pod was deleted (deletionTimestamp) or vanished from the API: stop it. */
  terminationRequested?: boolean;
  /** Grace period for termination in seconds (may only shrink once terminating). */
  gracePeriodS?: number;
  /**
   * Stop the pod although it stays in the API (kubelet SyncPodKill: node shutdown, eviction). The
   * worker terminates it like a deletion but keeps its status, edited by `statusFn` from then on.
   */
  kill?: { statusFn: PodStatusFn };
}


/**
 * Every pass of a pod worker is published here after it ends (for counters such as
 * bench/lib/idle-counters.mjs: an idle node's CPU follows its resyncs), as the CRI client
 * publishes its calls on `nodelet:cri:call`. Nothing is built when no one subscribes.
 */
export const POD_SYNC_CHANNEL = 'nodelet:agent:pod-sync';
export interface PodSyncEvent {
  uid: string;
  phase: Exclude<WorkerPhase, 'finished'>;
  /** `resync`: the worker's own timer (syncFrequency with jitter, a backoff, a requeue hint); `update`: an update, a PLEG event or the pass before. */
  trigger: 'resync' | 'update';
  durationMs: number;
  failed: boolean;
}
const syncChannel = channel(POD_SYNC_CHANNEL);

export interface PodSyncResult {
  /** The pod reached Succeeded/Failed and must stop. */
  terminal: boolean;
  /** Sync again after this long at the latest (a backoff expires). */
  requeueAfterMs?: number;
  /**
   * The sync created, started or killed something: the worker syncs again at once on the pod's
   * fresh state, so what it just did shows in the status without waiting for the PLEG. Not when
   * the sync also asked for a wait (`requeueAfterMs`: a start failed, a backoff runs): then the
   * wait holds, and the PLEG wakes the worker when it sees the change, as before.
   */
  changed?: boolean;
}

/** The work itself (kubelet podSyncer), injected so the worker is tested with small fakes. */
export interface PodSyncer {
  /** Returns `terminal: true` when the pod reached Succeeded/Failed and must stop. */
  syncPod(signal: AbortSignal, pod: Pod, observed: ObservedPod): Promise<PodSyncResult>;
  /** `statusFn` is set for a pod the agent stops on its own (PodUpdate.kill). */
  syncTerminatingPod(signal: AbortSignal, pod: Pod, observed: ObservedPod, gracePeriodS: number, statusFn?: PodStatusFn): Promise<void>;
  /** `deleted`: the pod is gone or going from the API, so its runtime objects are removed. */
  syncTerminatedPod(signal: AbortSignal, pod: Pod, deleted: boolean, statusFn?: PodStatusFn): Promise<void>;
}

/** The runtime cache as the worker needs it (pleg/pleg.ts). */
export interface PodCache {
  /** The pod's view from state read after `after` (kubelet cache.GetNewerThan). */
  getNewerThan(uid: string, after: number, signal: AbortSignal): Promise<ObservedPod>;
  get(uid: string): ObservedPod;
}

export interface PodWorkerOptions {
  uid: string;
  syncer: PodSyncer;
  cache: PodCache;
  clock: Clock;
  log: Logger;
  random?: () => number;
  resyncMs: number;
  startPhase?: WorkerPhase;
  /** Called once when the worker reaches `finished`. */
  onFinished?(uid: string): void;
}

export class PodWorker {
  readonly uid: string;
  readonly #o: PodWorkerOptions;
  #phase: WorkerPhase;
  #pending?: PodUpdate;
  #current?: Pod;
  #terminationRequested = false;
  #statusFn?: PodStatusFn;
  /** Resolved once the pod's containers are stopped (the worker left `terminating`). */
  #markTerminated!: () => void;
  readonly #terminated = new Promise<void>((r) => (this.#markTerminated = r));
  #graceS?: number;
  #inflight?: AbortController;
  #lastSync = 0;
  #cancelTimer?: () => void;
  /** Whether the next pass was woken by the worker's own timer (for {@link POD_SYNC_CHANNEL}). */
  #timerWoke = false;
  readonly #wake = new Wakeup();
  readonly #backoff: Backoff;

  constructor(o: PodWorkerOptions) {
    this.uid = o.uid;
    this.#o = o;
    this.#phase = o.startPhase ?? 'sync';
    if (this.#phase === 'terminated' || this.#phase === 'finished') this.#markTerminated();
    this.#backoff = new Backoff({ initialMs: 1000, maxMs: 10_000, clock: o.clock });
  }

  get phase(): WorkerPhase {
    return this.#phase;
  }

  /** The latest pod this worker knows. */
  get pod(): Pod | undefined {
    return this.#pending?.pod ?? this.#current;
  }

  get terminationRequested(): boolean {
    return this.#terminationRequested;
  }

  /**
   * Resolves once the pod's containers are stopped: at once for a pod already past `terminating`,
   * never for one that keeps running (callers race it with their own deadline, kubelet killPodNow).
   */
  terminated(): Promise<void> {
    return this.#terminated;
  }

  /** Synchronous; never awaits. The newest update replaces any pending one. */
  update(u: PodUpdate): void {
    if (this.#phase === 'finished') return;
    this.#pending = u;
    if (u.kill) this.#statusFn ??= u.kill.statusFn;
    if (u.terminationRequested || u.kill) {
      const shrinks = u.gracePeriodS !== undefined && (this.#graceS === undefined || u.gracePeriodS < this.#graceS);
      if (shrinks) this.#graceS = u.gracePeriodS;
      if (u.terminationRequested) this.#terminationRequested = true;
      if (this.#phase === 'sync') {
        this.#enter('terminating');
        this.#inflight?.abort(new DOMException(`pod ${this.uid} is terminating`, 'AbortError'));
      } else if (this.#phase === 'terminating' && shrinks) {
        this.#inflight?.abort(new DOMException(`pod ${this.uid} grace period shortened`, 'AbortError'));
      }
    }
    this.#timerWoke = false;
    this.#wake.notify();
  }

  /** Wakes the worker to resync (PLEG event, backoff expiry). */
  wake(): void {
    this.#timerWoke = false;
    this.#wake.notify();
  }

  async run(stop: AbortSignal): Promise<void> {
    try {
      while (this.#phase !== 'finished') {
        await this.#wake.wait(stop);
        this.#cancelTimer?.();
        if (this.#pending) {
          this.#current = this.#pending.pod;
          this.#pending = undefined;
        }
        const pod = this.#current;
        if (!pod) continue;
        const link = linkAbort(stop);
        this.#inflight = link.controller;
        let delayMs = jitter(this.#o.resyncMs, 0.5, this.#o.random);
        const phase = this.#phase;
        const trigger = this.#timerWoke ? 'resync' : 'update';
        this.#timerWoke = false;
        const t0 = syncChannel.hasSubscribers ? performance.now() : 0;
        let failed = false;
        try {
          const seen = await this.#o.cache.getNewerThan(this.uid, this.#lastSync, link.signal);
          if (phase === 'sync') {
            const r = await this.#o.syncer.syncPod(link.signal, pod, seen);
            if (r.terminal && this.#phase === 'sync') {
              this.#enter('terminating');
              delayMs = 0;
            } else if (r.changed && r.requeueAfterMs === undefined) {
              delayMs = 0;
            } else if (r.requeueAfterMs !== undefined) {
              delayMs = Math.min(delayMs, r.requeueAfterMs);
            }
          } else if (phase === 'terminating') {
            const grace = this.#graceS ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
            await this.#o.syncer.syncTerminatingPod(link.signal, pod, seen, grace, this.#statusFn);
            this.#enter('terminated');
            delayMs = 0;
          } else if (phase === 'terminated') {
            await this.#o.syncer.syncTerminatedPod(link.signal, pod, this.#terminationRequested, this.#statusFn);
            this.#enter('finished');
          }
          this.#backoff.reset();
        } catch (err) {
          failed = true;
          if (stop.aborted) throw err;
          if (isAbortError(err) && link.signal.aborted) delayMs = 0; // preempted: a newer update is pending
          else {
            this.#o.log.warn({ podUID: this.uid, phase, err: describeError(err), code: errCode(err) }, 'Pod sync failed');
            delayMs = jitter(this.#backoff.next(), 0.1, this.#o.random);
          }
        } finally {
          link.dispose();
          this.#inflight = undefined;
          this.#lastSync = this.#o.clock.now();
          if (syncChannel.hasSubscribers) syncChannel.publish({ uid: this.uid, phase, trigger, durationMs: performance.now() - t0, failed } satisfies PodSyncEvent);
        }
        if (this.#finished()) break;
        if (delayMs <= 0 || this.#phase !== phase) this.#wake.notify();
        else {
          this.#cancelTimer = this.#o.clock.setTimer(delayMs, () => {
            this.#timerWoke = true;
            this.#wake.notify();
          });
        }
      }
    } catch (err) {
      if (!isAbortError(err) && !stop.aborted) throw err;
    } finally {
      this.#cancelTimer?.();
    }
    if (this.#phase === 'finished') this.#o.onFinished?.(this.uid);
  }

  #finished(): boolean {
    return this.#phase === 'finished';
  }

  #enter(to: WorkerPhase): void {
    if (!NEXT[this.#phase].includes(to)) throw new Error(`pod worker ${this.uid}: illegal phase change ${this.#phase} \u2192 ${to}`);
    this.#o.log.info({ podUID: this.uid, from: this.#phase, to }, 'Pod worker phase changed');
    this.#phase = to;
    if (to === 'terminated') this.#markTerminated();
  }
}
