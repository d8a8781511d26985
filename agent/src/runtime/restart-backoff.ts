/**
 * CrashLoopBackOff timing as client-go's flowcontrol.Backoff with an event time: a container that
 * died at `finishedAt` may restart once `delay` has passed since its death. The first restart is
 * immediate and starts the delay at 10 s; each further restart doubles it up to 300 s; a container
 * that stayed up for 2 × max (10 min) starts over (kubelet `containerBackOffPeriod`, `MaxContainerBackOff`).
 */
import type { Clock } from '@nodelet/base';

export interface RestartBackoffOptions {
  clock: Clock;
  initialMs?: number;
  maxMs?: number;
}

export class RestartBackoff {
  readonly #clock: Clock;
  readonly #initial: number;
  readonly #max: number;
  readonly #entries = new Map<string, { delayMs: number; lastUpdate: number }>();

  constructor(o: RestartBackoffOptions) {
    this.#clock = o.clock;
    this.#initial = o.initialMs ?? 10_000;
    this.#max = o.maxMs ?? 300_000;
  }

  /** Remaining wait in ms before a container that died at `finishedAt` may restart; 0 = go. */
  remaining(key: string, finishedAt: number): number {
    const e = this.#entries.get(key);
    if (!e || this.#expired(e, finishedAt)) return 0;
    return Math.max(0, finishedAt + e.delayMs - this.#clock.now());
  }

  /** The current delay for messages ("back-off 20s restarting failed container"). */
  delay(key: string): number {
    return this.#entries.get(key)?.delayMs ?? 0;
  }

  /** Records a restart of a container that died at `finishedAt`. */
  next(key: string, finishedAt: number): void {
    const e = this.#entries.get(key);
    const delayMs = !e || this.#expired(e, finishedAt) ? this.#initial : Math.min(e.delayMs * 2, this.#max);
    this.#entries.set(key, { delayMs, lastUpdate: this.#clock.now() });
  }

  /** Forgets every key of a pod (its UID prefix) once the pod is gone. */
  forgetPrefix(prefix: string): void {
    for (const k of this.#entries.keys()) if (k.startsWith(prefix)) this.#entries.delete(k);
  }

  #expired(e: { lastUpdate: number }, eventTime: number): boolean {
    return eventTime - e.lastUpdate > 2 * this.#max;
  }
}
