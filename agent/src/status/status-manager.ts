/**
 * The one writer of pod status (kubelet status/status_manager.go).
 *
 *   setStatus(pod, s) ──▶ cache[uid] = {version++, status}  ──wake──▶ writer loop
 *   writer loop: each entry whose version > sent version: merge-patch pods/<name>/status
 *                every 10 s a resync also rewrites what the API shows differently (apiStatus);
 *                at most `concurrency` patches in flight
 *   requestDelete(pod): once the latest status is written, DELETE with grace 0 + uid precondition
 *
 * The writes of different pods are independent: a pod's patch starts as soon as a slot is free,
 * not when the slowest patch of a batch has landed (a pod turning Ready in a burst of pod starts
 * does not wait behind the others' patches). One pod has at most one write in flight.
 *
 * Coalescing: many setStatus calls between two writes cost one PATCH (a pod's status set while
 * its write is in flight goes out once that write lands); a status equal to the one last written
 * costs none. Stale versions are never written over newer ones.
 */
import { Wakeup, abortError, describeError, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import { isDeepStrictEqual } from 'node:util';
import { mergePatch, PODS, type ApiClient, type Pod, type PodStatus } from '@nodelet/api/agent';

interface Entry {
  namespace: string;
  name: string;
  uid: string;
  /** For static pods the status goes to the mirror pod, which has its own UID (no precondition). */
  checkUid: boolean;
  version: number;
  sentVersion: number;
  status: PodStatus;
  sentJson?: string;
  deleteRequested: boolean;
  deleted: boolean;
  /** A write of this entry is in flight. */
  writing: boolean;
  /** Must be written at the next chance even when unchanged (the periodic resync). */
  forced: boolean;
  /** After a failed write, not retried before this clock time. */
  retryAt: number;
  /** The API's copy and the status JSON last found to agree (`#needsReconcile`), by identity. */
  agreed?: { seen: PodStatus; json: string };
}

/** A failed write is retried after this long (with every other update of that pod folded in). */
const RETRY_MS = 500;

export interface StatusManagerOptions {
  api: ApiClient;
  clock: Clock;
  log: Logger;
  resyncMs?: number;
  concurrency?: number;
  /** Notified after a pod was deleted from the API (final step of its lifecycle). */
  onDeleted?(uid: string): void;
  /** Notified after a status patch was accepted (pod journey tracing, docs/tracing.md). */
  onWritten?(uid: string, status: PodStatus): void;
  /**
   * The pod's status as the API last showed it (the informer's copy). A resync rewrites a status
   * only when patching it would change that (kubelet's needsReconcile): unchanged pods cost no
   * request, where a resync used to PATCH every pod every 10 s. Unset, or unknown for a pod (a
   * static pod's mirror): every resync writes.
   */
  apiStatus?(uid: string): PodStatus | undefined;
}

export class StatusManager {
  readonly #o: StatusManagerOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #wake = new Wakeup();
  readonly #idle = new Set<() => void>();

  constructor(o: StatusManagerOptions) {
    this.#o = o;
  }

  /** The latest status set for a pod (the base the next computation starts from). */
  getStatus(uid: string): PodStatus | undefined {
    return this.#entries.get(uid)?.status;
  }

  /** Records a new status. Synchronous; the write happens in the background. */
  setStatus(pod: Pod, status: PodStatus, opts: { statusTarget?: { name: string; namespace: string; uid?: string } } = {}): void {
    const uid = pod.metadata.uid!;
    let e = this.#entries.get(uid);
    if (!e) {
      const target = opts.statusTarget ?? { name: pod.metadata.name!, namespace: pod.metadata.namespace!, uid };
      e = {
        namespace: target.namespace, name: target.name, uid: target.uid ?? uid, checkUid: !!target.uid, version: 0, sentVersion: 0, status,
        deleteRequested: false, deleted: false, writing: false, forced: false, retryAt: 0,
      };
      this.#entries.set(uid, e);
    }
    e.status = status;
    e.version++;
    this.#wake.notify();
  }

  /** Deletes the pod from the API (grace 0, uid precondition) once its final status is written. */
  requestDelete(pod: Pod): void {
    const e = this.#entries.get(pod.metadata.uid!);
    if (!e) {
      this.setStatus(pod, pod.status ?? {});
      return this.requestDelete(pod);
    }
    e.deleteRequested = true;
    this.#wake.notify();
  }

  forget(uid: string): void {
    this.#entries.delete(uid);
  }

  /**
   * Resolves when nothing is waiting to be written (tests, shutdown); rejects with an AbortError
   * when `signal` aborts first. Each wait removes its listener, however long `signal` lives.
   */
  async flushed(signal: AbortSignal): Promise<void> {
    while (this.#pendingCount() > 0) {
      await new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(abortError(signal.reason));
        const onAbort = (): void => {
          this.#idle.delete(idle);
          reject(abortError(signal.reason));
        };
        const idle = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        this.#idle.add(idle);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  #pendingCount(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (this.#dirty(e)) n++;
    return n;
  }

  #dirty(e: Entry): boolean {
    return !e.deleted && (e.version > e.sentVersion || (e.deleteRequested && e.version === e.sentVersion));
  }

  /**
   * Writes statuses until `signal` aborts; resolves once the writes in flight have ended. Up to
   * `concurrency` (8) pods are written at once, each as soon as a slot is free.
   */
  async run(signal: AbortSignal): Promise<void> {
    const resync = this.#o.resyncMs ?? 10_000;
    const limit = this.#o.concurrency ?? 8;
    const inflight = new Set<Promise<void>>();
    let lastResync = this.#o.clock.now();
    let cancelRetry: (() => void) | undefined;
    try {
      while (!signal.aborted) {
        try {
          await this.#wake.wait(signal, { clock: this.#o.clock, ms: resync });
        } catch (err) {
          if (isAbortError(err) || signal.aborted) return;
          throw err;
        }
        const now = this.#o.clock.now();
        if (now - lastResync >= resync) {
          lastResync = now;
          for (const e of this.#entries.values()) if (!e.deleted) e.forced = true;
        }
        let nextRetry = Infinity;
        for (const e of this.#entries.values()) {
          if (inflight.size >= limit) break;
          if (e.writing || !(this.#dirty(e) || (e.forced && !e.deleted))) continue;
          if (e.retryAt > now) {
            nextRetry = Math.min(nextRetry, e.retryAt);
            continue;
          }
          e.writing = true;
          const force = e.forced;
          e.forced = false;
          const write = this.#write(e, signal, force).then((ok) => {
            e.writing = false;
            if (!ok) {
              e.retryAt = this.#o.clock.now() + RETRY_MS;
              if (force) e.forced = true;
            }
            inflight.delete(write);
            // A freed slot, or this pod's status set again while it was being written.
            this.#wake.notify();
          });
          inflight.add(write);
        }
        if (nextRetry < Infinity && !cancelRetry) {
          cancelRetry = this.#o.clock.setTimer(Math.max(0, nextRetry - now), () => {
            cancelRetry = undefined;
            this.#wake.notify();
          });
        }
        if (inflight.size === 0 && this.#pendingCount() === 0) {
          const idle = [...this.#idle];
          this.#idle.clear();
          for (const r of idle) r();
        }
      }
    } finally {
      cancelRetry?.();
      await Promise.allSettled([...inflight]);
    }
  }

  /** Returns false when the write failed and should be retried. */
  async #write(e: Entry, signal: AbortSignal, force: boolean): Promise<boolean> {
    const version = e.version;
    const status = e.status;
    const json = JSON.stringify(status);
    try {
      if (json !== e.sentJson || (force && this.#needsReconcile(e, json))) {
        const patch: Record<string, unknown> = { status };
        if (e.checkUid) patch.metadata = { uid: e.uid };
        await this.#o.api.patch(PODS, e.name, patch, { type: 'merge', namespace: e.namespace, subresource: 'status', signal });
        e.sentJson = json;
        this.#o.onWritten?.(e.uid, status);
      }
      e.sentVersion = Math.max(e.sentVersion, version);
      if (e.deleteRequested && e.sentVersion === e.version) {
        await this.#o.api.delete(PODS, e.name, {
          namespace: e.namespace,
          gracePeriodSeconds: 0,
          ...(e.checkUid ? { preconditions: { uid: e.uid } } : {}),
          signal,
        });
        this.#finishDelete(e);
      }
      return true;
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND') || (e.deleteRequested && hasCode(err, 'ERR_CONFLICT'))) {
        // Gone already (or replaced by a pod with another UID): nothing more to write.
        this.#finishDelete(e);
        return true;
      }
      if (!signal.aborted) this.#o.log.warn({ pod: `${e.namespace}/${e.name}`, podUID: e.uid, err: describeError(err) }, 'Pod status update failed');
      return false;
    }
  }

  /**
   * Whether the API's copy differs from what a merge patch of `json` would leave (see `apiStatus`).
   * A null field and an absent one are the same value to the API (a null time is omitted on the
   * protobuf wire, which the agent's informer uses), and a merge patch keeps the nulls inside the
   * arrays it replaces (a condition's `lastProbeTime: null`): compared as they were, every pod
   * differed and was PATCHed at every resync.
   */
  #needsReconcile(e: Entry, json: string): boolean {
    const seen = e.checkUid ? this.#o.apiStatus?.(e.uid) : undefined;
    if (!seen) return true;
    // The informer replaces its objects on a change and never edits them, so the same object and
    // the same JSON as at the last resync agree again without the deep copies and compare below
    // (30 pods × five copies of a status every 10 s on an idle node).
    if (e.agreed?.seen === seen && e.agreed.json === json) return false;
    const differs = !isDeepStrictEqual(withoutNulls(mergePatch(seen, JSON.parse(json))), withoutNulls(seen));
    e.agreed = differs ? undefined : { seen, json };
    return differs;
  }

  #finishDelete(e: Entry): void {
    e.deleted = true;
    e.sentVersion = e.version;
    for (const [uid, x] of this.#entries) if (x === e) {
      this.#entries.delete(uid);
      this.#o.onDeleted?.(uid);
    }
  }
}

/** A copy of `v` without its null-valued object fields, at any depth (array elements kept). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}
