/**
 * One probe worker per (container, probe type) (kubelet prober/worker.go). It probes every
 * periodSeconds on the injected Clock and settles a result only after successThreshold /
 * failureThreshold equal outcomes in a row:
 *
 *   initial result   readiness: failure (not ready) · liveness: success · startup: none (not started)
 *   initialDelay     no probe until the container has run initialDelaySeconds
 *   startup probe    liveness and readiness wait until it succeeded; it stops probing after success
 *   liveness/startup a settled failure puts the worker on hold: the container will be replaced and
 *                    gets a fresh worker (new container ID)
 *
 * Every failed attempt records a Warning `Unhealthy` event ("Liveness probe failed: …").
 * The timer and the in-flight probe belong to a DisposableStore; dispose() stops both.
 */
import { DisposableStore, describeError, isAbortError, toDisposable, type Clock, type Logger } from '@nodelet/base';
import type { Container, Pod, Probe } from '@nodelet/api/agent';
import type { PodEventSink } from '../kubecontainer/events.js';
import { runProbe, type ExecRunner, type ProbeOutcome, type ProbeType } from './handlers.js';
import type { ProbeResults } from './results.js';
import type { ProbeMetrics } from './metrics.js';

export interface ProbeWorkerOptions {
  pod: Pod;
  container: Container;
  containerId: string;
  /** When the container started (ms since the epoch), for initialDelaySeconds. */
  startedAt: number;
  type: ProbeType;
  probe: Probe;
  podIP: () => string | undefined;
  results: ProbeResults;
  exec: ExecRunner;
  events: PodEventSink;
  clock: Clock;
  log: Logger;
  /** A settled result changed (the pod worker should sync). */
  onChange(): void;
  /** prober_probe_total (metrics.ts). */
  metrics?: ProbeMetrics;
}

const TITLE: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

export class ProbeWorker {
  readonly #o: ProbeWorkerOptions;
  readonly #store = new DisposableStore();
  readonly #abort = new AbortController();
  #last?: ProbeOutcome;
  #run = 0;
  #onHold = false;
  #cancelTimer?: () => void;

  constructor(o: ProbeWorkerOptions) {
    this.#o = o;
    this.#store.add(toDisposable(() => this.#abort.abort()));
    this.#store.add(toDisposable(() => this.#cancelTimer?.()));
    if (o.type === 'readiness') o.results.set(o.containerId, 'readiness', 'failure');
    if (o.type === 'liveness') o.results.set(o.containerId, 'liveness', 'success');
    this.#schedule(0);
  }

  get containerId(): string {
    return this.#o.containerId;
  }

  dispose(): void {
    this.#store.dispose();
    this.#o.results.delete(this.#o.containerId, this.#o.type);
  }

  #schedule(ms: number): void {
    if (this.#store.isDisposed) return;
    // One timer at a time; the store's disposable cancels whichever is pending.
    this.#cancelTimer = this.#o.clock.setTimer(ms, () => {
      this.#cancelTimer = undefined;
      void this.#tick().then((again) => {
        if (again) this.#schedule(this.#periodMs());
      });
    });
  }

  #periodMs(): number {
    return (this.#o.probe.periodSeconds || 10) * 1000;
  }

  /** One period: probe unless waiting or on hold; false when this worker has nothing more to do. */
  async #tick(): Promise<boolean> {
    const o = this.#o;
    if (this.#onHold) return false;
    const delayS = o.probe.initialDelaySeconds ?? 0;
    if (o.clock.now() - o.startedAt < delayS * 1000) return true;
    if (o.type !== 'startup' && o.container.startupProbe && o.results.get(o.containerId, 'startup') !== 'success') return true;
    let outcome: ProbeOutcome;
    const podRef = { namespace: o.pod.metadata.namespace ?? '', name: o.pod.metadata.name ?? '', uid: o.pod.metadata.uid ?? '' };
    try {
      const r = await runProbe(o.probe, { container: o.container, containerId: o.containerId, podIP: o.podIP() }, o.exec, this.#abort.signal);
      outcome = r.outcome;
      o.metrics?.inc(podRef, o.container.name, o.type, outcome === 'success' ? 'successful' : 'failed');
      if (outcome === 'failure') o.events.event(o.pod, 'Warning', 'Unhealthy', `${TITLE[o.type]} probe failed: ${r.output}`, `spec.containers{${o.container.name}}`);
    } catch (err) {
      if (isAbortError(err) || this.#store.isDisposed) return false;
      o.log.warn({ container: o.container.name, probe: o.type, err: describeError(err) }, 'Probe errored');
      o.metrics?.inc(podRef, o.container.name, o.type, 'unknown');
      outcome = 'failure';
    }
    if (this.#store.isDisposed) return false;
    this.#run = outcome === this.#last ? this.#run + 1 : 1;
    this.#last = outcome;
    const threshold = outcome === 'success' ? (o.probe.successThreshold || 1) : (o.probe.failureThreshold || 3);
    if (this.#run < threshold) return true;
    if (o.results.set(o.containerId, o.type, outcome)) {
      o.log.info({ pod: `${o.pod.metadata.namespace}/${o.pod.metadata.name}`, container: o.container.name, probe: o.type, result: outcome }, 'Probe result changed');
      o.onChange();
    }
    if (outcome === 'failure' && o.type !== 'readiness') {
      this.#onHold = true;
      return false;
    }
    // A passed startup probe is never run again for this container.
    return !(o.type === 'startup' && outcome === 'success');
  }
}
