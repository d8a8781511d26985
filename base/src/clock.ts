/**
 * Injected time. Components take a Clock instead of calling Date.now()/setTimeout directly so
 * that backoff, jitter, resync and periodic jobs can be tested with the fake clock
 * (`@nodelet/base/testing`). Every wait and every periodic job in the daemons goes through one:
 *
 *   clock.sleep(ms, signal)                       one cancellable wait
 *   clock.every(periodMs, job, { signal, … })     a job that never overlaps itself (periodic.ts)
 *   clock.setTimer(ms, fn)                        the primitive both are built on
 *
 * An implementation provides `now`, `monotonic` and `setTimer` and extends {@link BaseClock} for
 * the rest, so a fake clock schedules sleeps and periodic jobs exactly like the real one.
 */
import { abortError } from './errors.js';
import { startPeriodic, type PeriodicJob, type PeriodicOptions } from './periodic.js';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring durations. */
  monotonic(): number;
  /** Schedules `fn` after `ms`; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
  /**
   * Resolves after `ms` on this clock, or rejects with an AbortError (cause: the signal's reason)
   * as soon as `signal` aborts. Either way it leaves no timer and no listener behind, so a loop
   * may sleep on a long-lived signal as often as it likes.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Runs `job` every `periodMs` until `o.signal` aborts or the returned job is disposed; see
   * {@link PeriodicOptions} for jitter, an immediate first run and per-run deadlines. Runs never
   * overlap: the next period starts when a run ends (kubelet's sliding `wait.JitterUntil`).
   * Every error a run throws goes to `o.onError`.
   */
  every(periodMs: number, job: (signal: AbortSignal) => unknown, o: PeriodicOptions): PeriodicJob;
}

/** `sleep` and `every` on top of an implementation's `setTimer`. */
export abstract class BaseClock implements Clock {
  abstract now(): number;
  abstract monotonic(): number;
  abstract setTimer(ms: number, fn: () => void): () => void;

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal.reason));
      const onAbort = (): void => {
        cancel();
        reject(abortError(signal?.reason));
      };
      const cancel = this.setTimer(Math.max(0, ms), () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  every(periodMs: number, job: (signal: AbortSignal) => unknown, o: PeriodicOptions): PeriodicJob {
    return startPeriodic(this, periodMs, job, o);
  }
}

class SystemClock extends BaseClock {
  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return performance.now();
  }

  setTimer(ms: number, fn: () => void): () => void {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  }
}

/** Real time. Its timers are unref'd: a pending sleep or periodic job never keeps a process alive. */
export const systemClock: Clock = new SystemClock();

/** `base * (1 + factor * r)` with r from `random` in [0, 1): kubelet's wait.Jitter. */
export function jitter(baseMs: number, factor: number, random: () => number = Math.random): number {
  return baseMs + baseMs * factor * random();
}
