/**
 * Graceful node shutdown (kubelet nodeshutdown/, docs/agent.md "Graceful node shutdown"): the agent
 * holds a logind delay lock so a shutdown waits for it, and stops pods when one starts.
 *
 *   start ─▶ InhibitDelayMaxSec < shutdownGracePeriod? → drop-in + reload (warn if still short)
 *         ─▶ take the delay lock ─▶ watch PrepareForShutdown
 *   PrepareForShutdown(true)  ─▶ shuttingDown (node Ready=False "node is shutting down")
 *                             ─▶ regular pods, then critical pods (shutdown-pods.ts) ─▶ release the lock
 *   PrepareForShutdown(false) ─▶ cancelled: not shutting down any more, take the lock again
 *   watch ended (bus restarted) ─▶ release, retry the whole start 1 s later (backoff to 30 s)
 *
 * No system bus or no logind at the first start: logged once, and the agent runs without it.
 * Events are handled one at a time, in order (a cancellation waits for the pod stops it follows).
 */
import { Backoff, describeError, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { InhibitLock, ShutdownInhibitor, ShutdownWatch } from '@nodelet/systemd';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import { shutdownGroups, stopPodsForShutdown } from './shutdown-pods.js';

/** How long to wait for logind to show a raised InhibitDelayMaxSec after the reload. */
const RELOAD_WAIT_MS = 5000;

export interface NodeShutdownManagerOptions {
  inhibitor: ShutdownInhibitor;
  /** shutdownGracePeriod; 0 disables the manager. */
  gracePeriodMs: number;
  /** shutdownGracePeriodCriticalPods. */
  criticalGracePeriodMs: number;
  /** The pods running now (workers in `sync`). */
  activePods(): Pod[];
  /** Stops one pod that stays in the API (PodWorkers.kill). */
  killPod(pod: Pod, gracePeriodS: number, statusFn: PodStatusFn): Promise<void>;
  /** The shutting-down state changed: report node status now. */
  onChange(shuttingDown: boolean): void;
  /** A Node event (kubelet: Normal NodeShutdown). */
  nodeEvent?(reason: string, message: string): void;
  clock: Clock;
  log: Logger;
}

export class NodeShutdownManager {
  readonly #o: NodeShutdownManagerOptions;
  #shuttingDown = false;
  #lock?: InhibitLock;
  /** Events in arrival order; the loop drains them one at a time. */
  #queue: boolean[] = [];
  #kick?: () => void;

  constructor(o: NodeShutdownManagerOptions) {
    this.#o = o;
  }

  get enabled(): boolean {
    return this.#o.gracePeriodMs > 0;
  }

  /** True from PrepareForShutdown(true) until a cancellation; the Ready condition reads it. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** True while the delay lock is held. */
  get holdsLock(): boolean {
    return !!this.#lock;
  }

  /**
   * Watches for shutdowns until `signal` aborts, then releases the lock. Never throws: without
   * logind it logs once and resolves; later failures are retried with backoff.
   */
  async run(signal: AbortSignal): Promise<void> {
    const log = this.#o.log;
    if (!this.enabled) {
      log.info({}, 'Graceful node shutdown disabled (shutdownGracePeriod is 0)');
      return;
    }
    const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000, clock: this.#o.clock });
    let first = true;
    while (!signal.aborted) {
      let watch: ShutdownWatch | undefined;
      try {
        watch = await this.#start(signal);
        first = false;
        backoff.reset();
        await this.#serve(watch, signal);
        if (!signal.aborted) log.warn({}, 'Node shutdown watch ended; watching again');
      } catch (err) {
        if (signal.aborted || isAbortError(err)) break;
        if (first && hasCode(err, 'ERR_UNAVAILABLE')) {
          log.info({ err: describeError(err) }, 'Graceful node shutdown unavailable: no systemd-logind on the system bus');
          return;
        }
        log.warn({ err: describeError(err) }, 'Node shutdown watch failed');
      } finally {
        watch?.close();
        await this.#release();
      }
      await this.#o.clock.sleep(backoff.next(), signal).catch(() => undefined); // rejects only when aborted; the loop checks the signal
    }
  }

  /** Checks logind's delay limit, takes the lock and subscribes. */
  async #start(signal: AbortSignal): Promise<ShutdownWatch> {
    const { inhibitor, gracePeriodMs, log } = this.#o;
    let max = await inhibitor.inhibitDelayMaxMs(signal);
    if (max < gracePeriodMs) {
      try {
        await inhibitor.raiseInhibitDelay(gracePeriodMs, signal);
        const until = this.#o.clock.now() + RELOAD_WAIT_MS;
        while ((max = await inhibitor.inhibitDelayMaxMs(signal)) < gracePeriodMs && this.#o.clock.now() < until) await this.#o.clock.sleep(100, signal);
      } catch (err) {
        if (signal.aborted) throw err;
        log.warn({ err: describeError(err) }, 'Cannot raise logind InhibitDelayMaxSec');
      }
      if (max < gracePeriodMs) {
        log.warn({ inhibitDelayMaxMs: max, shutdownGracePeriodMs: gracePeriodMs }, 'logind InhibitDelayMaxSec is shorter than shutdownGracePeriod; a shutdown will not wait for all pods');
      }
    }
    this.#lock = await inhibitor.inhibit(signal);
    const watch = await inhibitor.watchShutdown((active) => {
      this.#queue.push(active);
      this.#kick?.();
    }, signal);
    log.info({ shutdownGracePeriodMs: gracePeriodMs, criticalPodsMs: this.#o.criticalGracePeriodMs, inhibitDelayMaxMs: max }, 'Graceful node shutdown armed');
    return watch;
  }

  /** Handles events until the watch ends or `signal` aborts. */
  async #serve(watch: ShutdownWatch, signal: AbortSignal): Promise<void> {
    let ended = false;
    void watch.ended.then(() => {
      ended = true;
      this.#kick?.();
    });
    const onAbort = (): void => this.#kick?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const next = this.#queue.shift();
        if (next === undefined) {
          if (ended) return;
          await new Promise<void>((r) => (this.#kick = r));
          this.#kick = undefined;
          continue;
        }
        if (next) await this.#shutdown(signal);
        else await this.#cancelled(signal);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #shutdown(signal: AbortSignal): Promise<void> {
    if (this.#shuttingDown) return; // a repeated signal: the first one is being (or was) handled
    const o = this.#o;
    o.log.info({}, 'Node shutdown detected: stopping pods');
    o.nodeEvent?.('NodeShutdown', 'Shutdown manager detected shutdown event');
    this.#shuttingDown = true;
    o.onChange(true);
    try {
      const groups = shutdownGroups(o.activePods(), o.gracePeriodMs, o.criticalGracePeriodMs);
      await stopPodsForShutdown({ groups, killPod: o.killPod, clock: o.clock, log: o.log, signal });
    } finally {
      await this.#release();
      o.log.info({}, 'Node shutdown: pods stopped, inhibitor lock released');
    }
  }

  async #cancelled(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    o.log.info({}, 'Node shutdown cancelled');
    o.nodeEvent?.('NodeShutdown', 'Shutdown manager detected shutdown cancellation');
    if (this.#shuttingDown) {
      this.#shuttingDown = false;
      o.onChange(false);
    }
    if (!this.#lock) this.#lock = await o.inhibitor.inhibit(signal);
  }

  async #release(): Promise<void> {
    const lock = this.#lock;
    this.#lock = undefined;
    await lock?.release();
  }
}
