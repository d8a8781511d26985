/**
 * Injected time. Components take a Clock instead of calling Date.now()/setTimeout directly so
 * that backoff, jitter and resync can be tested with {@link FakeClock} (see `base/testing`).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring durations. */
  monotonic(): number;
  /** Schedules `fn` after `ms`; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
};

/** `base * (1 + factor * r)` with r from `random` in [0, 1): kubelet's wait.Jitter. */
export function jitter(baseMs: number, factor: number, random: () => number = Math.random): number {
  return baseMs + baseMs * factor * random();
}
