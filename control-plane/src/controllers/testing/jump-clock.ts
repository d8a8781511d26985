/**
 * A real clock that tests can move forward: timers run on real time (so retries and watches
 * behave as in production) and `jump(ms)` adds to the current time at once, firing every timer
 * that falls due. Lets a test cross a 10 s backoff or a deadline without waiting for it.
 */
import { BaseClock } from '@nodelet/base';

export class JumpClock extends BaseClock {
  #offset = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void; handle: ReturnType<typeof setTimeout> }>();
  #next = 1;

  now(): number {
    return Date.now() + this.#offset;
  }

  monotonic(): number {
    return performance.now() + this.#offset;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const id = this.#next++;
    const handle = setTimeout(() => this.#fire(id), ms);
    handle.unref?.();
    this.#timers.set(id, { at: this.monotonic() + ms, fn, handle });
    return () => {
      const t = this.#timers.get(id);
      if (t) clearTimeout(t.handle);
      this.#timers.delete(id);
    };
  }

  /** Moves time forward by `ms`, firing the timers now due (in order). */
  jump(ms: number): void {
    this.#offset += ms;
    const due = [...this.#timers.entries()].filter(([, t]) => t.at <= this.monotonic()).sort((a, b) => a[1].at - b[1].at);
    for (const [id] of due) this.#fire(id);
  }

  #fire(id: number): void {
    const t = this.#timers.get(id);
    if (!t) return;
    clearTimeout(t.handle);
    this.#timers.delete(id);
    t.fn();
  }
}
