/**
 * The scheduling queue (upstream `PriorityQueue`; activeQ is ordered by pod priority, higher
 * first, then by arrival, as upstream's PrioritySort):
 *
 *            add/update                      pop
 *   pending ─────────────▶  activeQ  ─────────────────▶ scheduling cycle
 *                              ▲  ▲                         │ failed
 *        backoff expired       │  │ cluster event           ▼
 *   backoffQ ──────────────────┘  └──────────────── unschedulable
 *        ▲   (1 s doubling to 10 s per attempt)       │ flushed after 5 min
 *        └────────────────────────────────────────────┘
 *
 * Keys are `namespace/name`. A pod is in at most one of the three sets. A cluster event (node
 * added/changed, bound pod deleted) moves unschedulable pods to backoffQ, or straight to activeQ
 * when their backoff already elapsed. Time comes from the injected Clock.
 *
 * activeQ and backoffQ are heaps (by arrival, by backoff expiry) beside the maps that say what
 * is in each set; a heap item whose map entry is gone or replaced is skipped when it surfaces.
 * unschedulable is a map in order of failure, so the 5-minute flush stops at the first pod
 * that is not due. Every operation is O(log n) or O(moved pods), never a scan of the queue.
 */
import type { Clock } from '@nodelet/base';
import { Wakeup } from '@nodelet/base';
import { Heap } from './heap.js';

export const POD_INITIAL_BACKOFF_MS = 1_000;
export const POD_MAX_BACKOFF_MS = 10_000;
export const POD_MAX_UNSCHEDULABLE_MS = 5 * 60_000;

interface Entry {
  key: string;
  attempts: number;
  /** When the last failed attempt ended (for backoff) or the pod was added. */
  lastAttemptAt: number;
  /** `spec.priority`: higher is served first. */
  priority: number;
  /** Queue order among equal priorities: first added first served. */
  seq: number;
}

export class SchedulingQueue {
  readonly #clock: Clock;
  readonly #active = new Map<string, Entry>();
  readonly #activeHeap = new Heap<Entry>((a, b) => (a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq));
  readonly #backoff = new Map<string, Entry>();
  readonly #backoffHeap = new Heap<Entry>((a, b) => this.#backoffExpiry(a) < this.#backoffExpiry(b));
  /** In the order pods failed (so in lastAttemptAt order). */
  readonly #unschedulable = new Map<string, Entry>();
  /** Entries being scheduled right now (popped, not yet done). */
  readonly #inFlight = new Map<string, Entry>();
  /** Set when a cluster event arrives while pods are in flight: their failure goes to backoff, not unschedulable. */
  #moveRequestSeq = 0;
  readonly #cycleOfInFlight = new Map<string, number>();
  readonly #wake = new Wakeup();
  #seq = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get sizes(): { active: number; backoff: number; unschedulable: number; inFlight: number } {
    return { active: this.#active.size, backoff: this.#backoff.size, unschedulable: this.#unschedulable.size, inFlight: this.#inFlight.size };
  }

  has(key: string): boolean {
    return this.#active.has(key) || this.#backoff.has(key) || this.#unschedulable.has(key) || this.#inFlight.has(key);
  }

  /** A new pending pod, or an update of one: (re)activate it unless it is backing off. `priority` orders activeQ. */
  addOrUpdate(key: string, priority = 0): void {
    if (this.#inFlight.has(key) || this.#active.has(key) || this.#backoff.has(key)) return;
    const u = this.#unschedulable.get(key);
    if (u) {
      // The pod itself changed (tolerations, selectors...): it may fit now.
      this.#unschedulable.delete(key);
      this.#requeue(u);
      return;
    }
    this.#toActive({ key, attempts: 0, lastAttemptAt: this.#clock.now(), priority, seq: this.#seq++ });
    this.#wake.notify();
  }

  /** The pod was bound elsewhere or deleted. */
  delete(key: string): void {
    this.#active.delete(key);
    this.#backoff.delete(key);
    this.#unschedulable.delete(key);
  }

  /**
   * Waits for the next pod to schedule. The returned key stays "in flight" until
   * {@link done} or {@link failed} is called for it.
   */
  async pop(signal: AbortSignal): Promise<string> {
    for (;;) {
      const key = this.tryPop();
      if (key !== undefined) return key;
      // Sleep until a new pod, a cluster event, or the earliest backoff expiry.
      const wait = this.#nextBackoffExpiry();
      let cancel: (() => void) | undefined;
      if (wait !== undefined) cancel = this.#clock.setTimer(Math.max(0, wait - this.#clock.now()), () => this.#wake.notify());
      try {
        await this.#wake.wait(signal);
      } finally {
        cancel?.();
      }
    }
  }

  /** {@link pop} without waiting: the next pod to schedule, or undefined when none is ready. */
  tryPop(): string | undefined {
    this.flushBackoff();
    const next = this.#popActive();
    if (!next) return undefined;
    this.#inFlight.set(next.key, next);
    this.#cycleOfInFlight.set(next.key, this.#moveRequestSeq);
    return next.key;
  }

  /** Scheduled and bound (or the pod went away): forget it. */
  done(key: string): void {
    this.#inFlight.delete(key);
    this.#cycleOfInFlight.delete(key);
  }

  /**
   * The attempt failed. `unschedulable` = no node fits (wait for a cluster event); otherwise
   * an error such as a failed binding (retry after backoff).
   */
  failed(key: string, unschedulable: boolean): void {
    const e = this.#inFlight.get(key);
    if (!e) return;
    this.#inFlight.delete(key);
    const cycle = this.#cycleOfInFlight.get(key) ?? 0;
    this.#cycleOfInFlight.delete(key);
    e.attempts++;
    e.lastAttemptAt = this.#clock.now();
    // A cluster event during the attempt may have made the pod schedulable: don't park it.
    if (unschedulable && cycle === this.#moveRequestSeq) this.#unschedulable.set(key, e);
    else this.#toBackoff(e);
    this.#wake.notify();
  }

  /** Nodes or bound pods changed: give every parked pod another chance (after its backoff). */
  moveAllToActiveOrBackoff(): void {
    this.#moveRequestSeq++;
    for (const e of this.#unschedulable.values()) this.#requeue(e);
    this.#unschedulable.clear();
    this.#wake.notify();
  }

  /**
   * Like {@link moveAllToActiveOrBackoff} for the unschedulable pods `wants` picks (upstream's
   * AssignedPodAdd moves only pods whose affinity the new pod may satisfy). O(unschedulable).
   */
  moveToActiveOrBackoff(wants: (key: string) => boolean): void {
    this.#moveRequestSeq++;
    let moved = false;
    for (const [key, e] of this.#unschedulable) {
      if (!wants(key)) continue;
      this.#unschedulable.delete(key);
      this.#requeue(e);
      moved = true;
    }
    if (moved) this.#wake.notify();
  }

  /** Moves pods whose backoff elapsed to activeQ and long-parked pods back into play. */
  flushBackoff(): void {
    const now = this.#clock.now();
    for (let e = this.#peekBackoff(); e && this.#backoffExpiry(e) <= now; e = this.#peekBackoff()) {
      this.#backoffHeap.pop();
      this.#backoff.delete(e.key);
      this.#toActive(e);
    }
    for (const e of this.#unschedulable.values()) {
      if (now - e.lastAttemptAt < POD_MAX_UNSCHEDULABLE_MS) break;
      this.#unschedulable.delete(e.key);
      this.#requeue(e);
    }
  }

  /** 1 s, 2 s, 4 s, 8 s, 10 s, 10 s … after the 1st, 2nd, … failed attempt. */
  static backoffFor(attempts: number): number {
    if (attempts <= 0) return 0;
    return Math.min(POD_INITIAL_BACKOFF_MS * 2 ** (attempts - 1), POD_MAX_BACKOFF_MS);
  }

  #backoffExpiry(e: Entry): number {
    return e.lastAttemptAt + SchedulingQueue.backoffFor(e.attempts);
  }

  #requeue(e: Entry): void {
    if (this.#backoffExpiry(e) <= this.#clock.now()) this.#toActive(e);
    else this.#toBackoff(e);
  }

  #toActive(e: Entry): void {
    this.#active.set(e.key, e);
    this.#activeHeap.push(e);
  }

  #toBackoff(e: Entry): void {
    this.#backoff.set(e.key, e);
    this.#backoffHeap.push(e);
  }

  /** The highest-priority, then earliest-added active entry, removed from activeQ; stale heap items are dropped. */
  #popActive(): Entry | undefined {
    for (let e = this.#activeHeap.pop(); e; e = this.#activeHeap.pop()) {
      if (this.#active.get(e.key) === e) {
        this.#active.delete(e.key);
        return e;
      }
    }
    return undefined;
  }

  #peekBackoff(): Entry | undefined {
    for (let e = this.#backoffHeap.peek(); e; e = this.#backoffHeap.peek()) {
      if (this.#backoff.get(e.key) === e) return e;
      this.#backoffHeap.pop();
    }
    return undefined;
  }

  #nextBackoffExpiry(): number | undefined {
    const b = this.#peekBackoff();
    let min = b ? this.#backoffExpiry(b) : undefined;
    // The oldest parked pod is the first to reach the 5-minute flush.
    const u = this.#unschedulable.values().next().value;
    if (u) {
      const t = u.lastAttemptAt + POD_MAX_UNSCHEDULABLE_MS;
      if (min === undefined || t < min) min = t;
    }
    return min;
  }
}
