// The scheduler (issue 6): filter → score → Binding, against the API through @nodelet/api only.
import type { ApiClient } from '@nodelet/api';
import { DisposableStore, linkAbort } from '@nodelet/base';
import { Scheduler, type SchedulerOptions } from './scheduler.js';

export { Scheduler, DEFAULT_SCHEDULER_NAME, type SchedulerOptions, type BindTiming } from './scheduler.js';
export { schedulePod, numFeasibleNodesToFind, type ScheduleResult } from './algorithm.js';

export interface SchedulerHandle {
  /** Stops scheduling and waits for in-flight bindings. Idempotent. */
  close(): Promise<void>;
}

/** The scheduler's options, with the client typed `unknown` (see startScheduler) and the signal that stops it. */
export type StartSchedulerOptions = Omit<SchedulerOptions, 'client'> & {
  client: unknown;
  signal: AbortSignal;
};

/**
 * Starts the scheduler against an API server. `client` is an `ApiClient` of `@nodelet/api`
 * (typed `unknown` so the composition root does not depend on its import). Stops when `signal`
 * aborts or `close()` is called; a crash of the loop is logged at error level.
 */
export async function startScheduler(opts: StartSchedulerOptions): Promise<SchedulerHandle> {
  const stop = linkAbort(opts.signal);
  const store = new DisposableStore();
  const scheduler = new Scheduler({ ...opts, client: opts.client as ApiClient });
  const done = scheduler.run(stop.signal, store).catch((err) => {
    opts.logger.error({ err, component: 'scheduler' }, 'Scheduler stopped unexpectedly');
  });
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        stop.dispose();
        stop.controller.abort();
        await done;
        store.dispose();
      })();
      return closed;
    },
  };
}
