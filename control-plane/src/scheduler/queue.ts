/**
 * The scheduling queue (upstream `PriorityQueue`, simplified to one priority):
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
 */
import type { Clock } from '@nodelet/base';
import { Wakeup } from '@nodelet/base';

export const POD_INITIAL_BACKOFF_MS = 1_000;
export const POD_MAX_BACKOFF_MS = 10_000;
export const POD_MAX_UNSCHEDULABLE_MS = 5 * 60_000;

interface Entry {
  key: string;
  attempts: number;
  /** When the last failed attempt ended (for backoff) or the pod was added. */
  lastAttemptAt: number;
  /** Queue order: first added first served. */
  seq: number;
}

export class SchedulingQueue {
  readonly #clock: Clock;
  readonly #active = new Map<string, Entry>();
  readonly #backoff = new Map<string, Entry>();
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

  /** A new pending pod, or an update of one: (re)activate it unless it is backing off. */
  addOrUpdate(key: string): void {
    if (this.#inFlight.has(key) || this.#active.has(key) || this.#backoff.has(key)) return;
    const u = this.#unschedulable.get(key);
    if (u) {
      // The pod itself changed (tolerations, selectors...): it may fit now.
      this.#unschedulable.delete(key);
      this.#requeue(u);
      return;
    }
    this.#active.set(key, { key, attempts: 0, lastAttemptAt: this.#clock.now(), seq: this.#seq++ });
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
      this.flushBackoff();
      const next = this.#first(this.#active);
      if (next) {
        this.#active.delete(next.key);
        this.#inFlight.set(next.key, next);
        this.#cycleOfInFlight.set(next.key, this.#moveRequestSeq);
        return next.key;
      }
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
    else this.#backoff.set(key, e);
    this.#wake.notify();
  }

  /** Nodes or bound pods changed: give every parked pod another chance (after its backoff). */
  moveAllToActiveOrBackoff(): void {
    this.#moveRequestSeq++;
    for (const e of this.#unschedulable.values()) this.#requeue(e);
    this.#unschedulable.clear();
    this.#wake.notify();
  }

  /** Moves pods whose backoff elapsed to activeQ and long-parked pods back into play. */
  flushBackoff(): void {
    const now = this.#clock.now();
    for (const e of [...this.#backoff.values()]) {
      if (this.#backoffExpiry(e) <= now) {
        this.#backoff.delete(e.key);
        this.#active.set(e.key, e);
      }
    }
    for (const e of [...this.#unschedulable.values()]) {
      if (now - e.lastAttemptAt >= POD_MAX_UNSCHEDULABLE_MS) {
        this.#unschedulable.delete(e.key);
        this.#requeue(e);
      }
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
    if (this.#backoffExpiry(e) <= this.#clock.now()) this.#active.set(e.key, e);
    else this.#backoff.set(e.key, e);
  }

  #nextBackoffExpiry(): number | undefined {
    let min: number | undefined;
    for (const e of this.#backoff.values()) {
      const t = this.#backoffExpiry(e);
      if (min === undefined || t < min) min = t;
    }
    if (this.#unschedulable.size > 0) {
      for (const e of this.#unschedulable.values()) {
        const t = e.lastAttemptAt + POD_MAX_UNSCHEDULABLE_MS;
        if (min === undefined || t < min) min = t;
      }
    }
    return min;
  }

  #first(m: Map<string, Entry>): Entry | undefined {
    let best: Entry | undefined;
    for (const e of m.values()) if (!best || e.seq < best.seq) best = e;
    return best;
  }
}
