/**
 * A periodic job on an injected clock (what `Clock.every` returns): kubelet's sliding
 * `wait.JitterUntil` with a trigger, an owner and an error channel.
 *
 *             ┌──────── period (× jitter) after the run ENDS ────────┐
 *             ▼                                                      │
 *   start ─▶ wait ──timer / trigger()──▶ run(signal) ──settled──▶ trigger()ed meanwhile? ─yes─▶ run again
 *     │ immediate ───────────────────────▲                          └─no──▶ wait
 *     │
 *   dispose() / signal aborts ─▶ no more runs; the run in flight sees its signal abort; `stopped`
 *                                resolves once it has ended
 *
 * Runs never overlap, so a slow run delays the next one instead of piling up behind it. An error
 * of a run is handed to `onError` (an AbortError of a stopped job is not an error) and the job
 * goes on with the next period. The job holds one listener on `signal` for its lifetime and
 * removes it when stopped (linkAbort), however many runs it makes.
 */
import type { Clock } from './clock.js';
import type { Disposable } from './disposable.js';
import { linkAbort, type AbortLink } from './abort.js';
import { isAbortError } from './errors.js';

export interface PeriodicOptions {
  /** Stops the job when it aborts, as `dispose()` does. */
  signal?: AbortSignal;
  /** Make the first run at once instead of one period after the start. */
  immediate?: boolean;
  /** Each wait is `period × (1 + jitter × random())` (kubelet wait.Jitter); default 0. */
  jitter?: number;
  /** Source of the jitter, in [0, 1); default Math.random. */
  random?: () => number;
  /**
   * A run's own deadline on the job's clock: its signal aborts with a TimeoutError after this
   * long (the error it then throws goes to `onError`); the job goes on.
   */
  timeoutMs?: number;
  /** Receives every error a run throws or rejects with. Required, so that none is dropped. */
  onError(err: unknown): void;
}

export interface PeriodicJob extends Disposable {
  /**
   * Runs the job as soon as possible: at once when it is waiting, right after the current run
   * when one is going. Calls before that run starts coalesce into one. No-op once stopped.
   */
  trigger(): void;
  /** Stops the job and aborts the run in flight. Idempotent. */
  dispose(): void;
  /** Resolves once the job is stopped and no run is in flight. Never rejects. */
  readonly stopped: Promise<void>;
}

/** Implementation behind `BaseClock.every`; use `clock.every(...)`. */
export function startPeriodic(clock: Clock, periodMs: number, job: (signal: AbortSignal) => unknown, o: PeriodicOptions): PeriodicJob {
  return new Periodic(clock, periodMs, job, o);
}

class Periodic implements PeriodicJob {
  readonly stopped: Promise<void>;
  readonly #clock: Clock;
  readonly #periodMs: number;
  readonly #job: (signal: AbortSignal) => unknown;
  readonly #o: PeriodicOptions;
  readonly #link: AbortLink;
  #resolveStopped!: () => void;
  #cancelTimer: (() => void) | undefined;
  #running = false;
  #again = false;
  #done = false;

  constructor(clock: Clock, periodMs: number, job: (signal: AbortSignal) => unknown, o: PeriodicOptions) {
    this.#clock = clock;
    this.#periodMs = periodMs;
    this.#job = job;
    this.#o = o;
    this.stopped = new Promise((resolve) => (this.#resolveStopped = resolve));
    this.#link = linkAbort(o.signal);
    if (this.#link.signal.aborted) {
      this.dispose();
      return;
    }
    this.#link.signal.addEventListener('abort', () => this.dispose(), { once: true });
    if (o.immediate) this.#run();
    else this.#wait();
  }

  trigger(): void {
    if (this.#done) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#run();
  }

  dispose(): void {
    if (this.#done) return;
    this.#done = true;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#link.dispose();
    if (!this.#link.signal.aborted) this.#link.controller.abort(new DOMException('periodic job stopped', 'AbortError'));
    if (!this.#running) this.#resolveStopped();
  }

  #wait(): void {
    const ms = this.#periodMs * (1 + (this.#o.jitter ?? 0) * (this.#o.random ?? Math.random)());
    this.#cancelTimer = this.#clock.setTimer(ms, () => {
      this.#cancelTimer = undefined;
      this.#run();
    });
  }

  #run(): void {
    this.#running = true;
    this.#again = false;
    // A per-run deadline needs a per-run signal; without one the job's own signal serves every run.
    let runLink: AbortLink | undefined;
    let cancelDeadline: (() => void) | undefined;
    const timeoutMs = this.#o.timeoutMs;
    if (timeoutMs !== undefined) {
      const link = linkAbort(this.#link.signal);
      runLink = link;
      cancelDeadline = this.#clock.setTimer(timeoutMs, () => link.controller.abort(new DOMException(`the job timed out after ${timeoutMs} ms`, 'TimeoutError')));
    }
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(this.#job(runLink?.signal ?? this.#link.signal));
    } catch (err) {
      result = Promise.reject(err);
    }
    void result
      .then(undefined, (err: unknown) => {
        if (!(this.#done && isAbortError(err))) this.#o.onError(err);
      })
      .finally(() => {
        cancelDeadline?.();
        runLink?.dispose();
        this.#running = false;
        if (this.#done) this.#resolveStopped();
        else if (this.#again) this.#run();
        else this.#wait();
      });
  }
}
