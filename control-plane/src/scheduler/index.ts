// The scheduler (issue 6). Placeholder export so the server composition root can wire it.
import type { Logger } from '@nodelet/base';

export interface SchedulerHandle {
  close(): Promise<void>;
}

/** Starts the scheduler against an API server; the real implementation replaces this stub. */
export async function startScheduler(_opts: { client: unknown; logger: Logger; signal: AbortSignal }): Promise<SchedulerHandle> {
  return { close: async () => {} };
}
