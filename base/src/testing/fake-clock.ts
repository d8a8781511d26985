import { BaseClock } from '../clock.js';

/**
 * A manually advanced clock for unit tests. `sleep` and `every` are the real ones (BaseClock),
 * scheduled on this clock's timers, so a test drives them deterministically:
 *
 *   clock.advance(ms)              fires the due timers synchronously, in order
 *   await clock.advanceAsync(ms)   the same, letting promise continuations run after each timer,
 *                                  so a loop that sleeps again (or a periodic job that re-arms
 *                                  after its run) is fired again within the same advance
 *   clock.timerDelays()            what is scheduled: ms until each pending timer, soonest first
 */
export class FakeClock extends BaseClock {
  #now: number;
  #mono = 0;
  #timers: Array<{ at: number; fn: () => void; id: number }> = [];
  #nextId = 1;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    super();
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#mono;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const id = this.#nextId++;
    this.#timers.push({ at: this.#mono + Math.max(0, ms), fn, id });
    return () => {
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.#mono + ms;
    for (;;) {
      const t = this.#takeDue(target);
      if (!t) break;
      t.fn();
    }
    this.#moveTo(target);
  }

  /**
   * Moves time forward like {@link advance}, but after each timer (and at the end) waits one
   * macrotask turn, so the continuations of what it resolved run first and may arm new timers.
   * Work that waits for real I/O is not waited for: await its effect, then advance again.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#mono + ms;
    await settle();
    for (;;) {
      const t = this.#takeDue(target);
      if (!t) break;
      t.fn();
      await settle();
    }
    this.#moveTo(target);
    await settle();
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Milliseconds until each pending timer fires, soonest first. */
  timerDelays(): number[] {
    return this.#timers.map((t) => t.at - this.#mono).sort((a, b) => a - b);
  }

  #takeDue(target: number): { fn: () => void } | undefined {
    this.#timers.sort((a, b) => a.at - b.at || a.id - b.id);
    const t = this.#timers[0];
    if (!t || t.at > target) return undefined;
    this.#timers.shift();
    this.#moveTo(t.at);
    return t;
  }

  #moveTo(mono: number): void {
    this.#now += mono - this.#mono;
    this.#mono = mono;
  }
}

/** One macrotask turn: every promise continuation queued so far (and those they queue) has run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
