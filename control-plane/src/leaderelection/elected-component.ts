/**
 * Runs one in-process component (the scheduler, the controller manager) either at once or only
 * while this server holds the component's Lease in kube-system (docs/ha.md):
 *
 *   elect: false   start() now; stop at close()           (one-server labs, --leader-elect=false)
 *   elect: true    LeaderElector.run: start() on acquire, stop on loss or close(), then release
 */
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { ApiClient } from '@nodelet/api';
import { apiLeaseLock } from './lease-lock.js';
import { LeaderElector, type LeaderElectorOptions } from './leader-elector.js';

/** kube-system, as kube-scheduler's and kube-controller-manager's --leader-elect-resource-namespace. */
export const LEADER_LEASE_NAMESPACE = 'kube-system';

/** What a component's start returns: something to stop. */
export interface Stoppable {
  close(): Promise<void>;
}

export interface ElectedComponentOptions {
  /** Lease name: `kube-scheduler` or `kube-controller-manager`. */
  lease: string;
  /** The component's own client: the lease is written with its identity's RBAC rights. */
  client: ApiClient;
  identity: string;
  clock: Clock;
  log: Logger;
  /** Test overrides of the kube defaults (15 s / 10 s / 2 s). */
  timings?: Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;
}

export interface ElectedComponent {
  readonly elector: LeaderElector;
  /** Stops the component if it runs and releases the lease. Idempotent. */
  close(): Promise<void>;
}

/**
 * Campaigns for `o.lease` and runs `start(signal)` for as long as this process leads. `start`
 * gets the leadership signal; what it returns is closed when leadership ends, before the lease is
 * released. A start that fails gives the lease up and campaigns again.
 */
export function runElected(o: ElectedComponentOptions, start: (signal: AbortSignal) => Promise<Stoppable>): ElectedComponent {
  const elector = new LeaderElector({ lock: apiLeaseLock(o.client, LEADER_LEASE_NAMESPACE, o.lease), identity: o.identity, clock: o.clock, log: o.log.child({ lease: o.lease }), ...o.timings });
  const stop = new AbortController();
  const running = elector.run(async (signal) => {
    const component = await start(signal);
    try {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    } finally {
      await component.close().catch((err: unknown) => o.log.warn({ lease: o.lease, err: describeError(err) }, 'Stopping the elected component failed'));
    }
  }, stop.signal);
  let closing: Promise<void> | undefined;
  return {
    elector,
    close: () => (closing ??= (async () => {
      stop.abort();
      await running;
    })()),
  };
}
