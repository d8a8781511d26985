/**
 * PodWorkers owns the `Map<uid, PodWorker>` (kubelet podWorkers). Callers only send updates:
 * the pod source (API, static files), the PLEG (`wake`) and housekeeping (orphans). Workers that
 * reached `finished` are dropped by `syncKnownPods` once the pod is no longer desired.
 */
import type { Clock, Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import { rejectedStatus, type PodAdmitResult } from '../admission/admit.js';
import { PodWorker, type PodCache, type PodSyncer, type PodUpdate, type WorkerPhase } from './pod-worker.js';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';

export interface PodWorkersOptions {
  syncer: PodSyncer;
  cache: PodCache;
  clock: Clock;
  log: Logger;
  resyncMs: number;
  random?: () => number;
  signal: AbortSignal;
  /**
   * Judges a pod new to the node against the pods it already runs (admission/admit.ts). A refused
   * pod gets a worker that terminates it at once with a Failed status of the refusal's reason.
   */
  admit?(pod: Pod, admitted: readonly Pod[]): PodAdmitResult;
}

export class PodWorkers {
  readonly #o: PodWorkersOptions;
  readonly #workers = new Map<string, PodWorker>();
  readonly #running = new Set<Promise<void>>();

  constructor(o: PodWorkersOptions) {
    this.#o = o;
  }

  /** Sends the newest version of a pod. A deleted pod (deletionTimestamp) starts terminating. */
  update(u: PodUpdate): void {
    const uid = u.pod.metadata.uid;
    if (!uid) return;
    let w = this.#workers.get(uid);
    if (w && w.phase === 'finished') {
      // A pod that finished by itself (Succeeded/Failed) and is now deleted: clean up what it left.
      if (!u.terminationRequested || w.terminationRequested) return;
      w = undefined;
      this.#workers.delete(uid);
      this.#start(uid, 'terminating').update(u);
      return;
    }
    if (!w) {
      const refused = this.#refusal(u);
      if (refused) {
        this.#start(uid, 'terminating').update({ pod: u.pod, gracePeriodS: 0, kill: { statusFn: rejectedStatus(refused.reason, refused.message) } });
        return;
      }
      w = this.#start(uid, 'sync');
    }
    w.update(u);
  }

  /**
   * Why a pod new to this node may not run here, if it may not. Not judged: pods being deleted,
   * pods already finished, and pods the runtime already has a sandbox for (the agent restarted:
   * they were admitted before).
   */
  #refusal(u: PodUpdate): { reason: string; message: string } | undefined {
    if (!this.#o.admit || u.terminationRequested) return undefined;
    const phase = u.pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return undefined;
    if (this.#o.cache.get(u.pod.metadata.uid!).sandboxes.length > 0) return undefined;
    const admitted = [...this.#workers.values()].filter((w) => w.phase === 'sync' || w.phase === 'terminating').map((w) => w.pod).filter((p): p is Pod => !!p);
    const r = this.#o.admit(u.pod, admitted);
    return r.admit ? undefined : r;
  }

  /**
   * Stops a running pod that stays in the API (kubelet killPodNow without its wait): its worker
   * terminates it with at most `gracePeriodS` and `statusFn` edits its status from then on.
   * Resolves when its containers are stopped; at once for a pod without a worker or already
   * stopped. Never rejects; callers race it with their own deadline.
   */
  kill(pod: Pod, o: { gracePeriodS: number; statusFn: PodStatusFn }): Promise<void> {
    const w = pod.metadata.uid ? this.#workers.get(pod.metadata.uid) : undefined;
    if (!w) return Promise.resolve();
    w.update({ pod: w.pod ?? pod, gracePeriodS: o.gracePeriodS, kill: { statusFn: o.statusFn } });
    return w.terminated();
  }

  /** Wakes a pod's worker (the PLEG saw a change). No-op without a worker. */
  wake(uid: string): void {
    this.#workers.get(uid)?.wake();
  }

  has(uid: string): boolean {
    return this.#workers.has(uid);
  }

  phase(uid: string): WorkerPhase | undefined {
    return this.#workers.get(uid)?.phase;
  }

  /** Pods that have a worker, with their latest spec. */
  pods(): Pod[] {
    return [...this.#workers.values()].map((w) => w.pod).filter((p): p is Pod => !!p);
  }

  /** Number of workers not yet finished (kubelet_working_pods-like). */
  get active(): number {
    let n = 0;
    for (const w of this.#workers.values()) if (w.phase !== 'finished') n++;
    return n;
  }

  /** Drops finished workers of pods not in `desired` (UIDs). */
  syncKnownPods(desired: ReadonlySet<string>): void {
    for (const [uid, w] of this.#workers) if (w.phase === 'finished' && !desired.has(uid)) this.#workers.delete(uid);
  }

  /** Resolves when every worker loop has returned (after the stop signal aborted). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }

  #start(uid: string, startPhase: WorkerPhase): PodWorker {
    const w = new PodWorker({
      uid,
      startPhase,
      syncer: this.#o.syncer,
      cache: this.#o.cache,
      clock: this.#o.clock,
      log: this.#o.log,
      random: this.#o.random,
      resyncMs: this.#o.resyncMs,
    });
    this.#workers.set(uid, w);
    const p = w.run(this.#o.signal).catch((err: unknown) => {
      this.#o.log.error({ podUID: uid, err: String(err) }, 'Pod worker crashed');
    });
    this.#running.add(p);
    void p.finally(() => this.#running.delete(p));
    return w;
  }
}
