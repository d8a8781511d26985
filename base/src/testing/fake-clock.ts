import type { Clock } from '../clock.js';

/** A manually advanced clock for unit tests. Timers fire synchronously inside `advance()`. */
export class FakeClock implements Clock {
  #now: number;
  #mono = 0;
  #timers: Array<{ at: number; fn: () => void; id: number }> = [];
  #nextId = 1;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
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
    this.#timers.push({ at: this.#mono + ms, fn, id });
    return () => {
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.#mono + ms;
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at);
      const t = this.#timers[0];
      if (!t || t.at > target) break;
      this.#timers.shift();
      this.#now += t.at - this.#mono;
      this.#mono = t.at;
      t.fn();
    }
    this.#now += target - this.#mono;
    this.#mono = target;
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }
}
