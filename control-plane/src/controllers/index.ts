// The controller manager (issue 6). Placeholder export so the server composition root can wire it.
import type { Logger } from '@nodelet/base';

export interface ControllerManagerHandle {
  close(): Promise<void>;
}

/** Starts every controller against an API server; the real implementation replaces this stub. */
export async function startControllerManager(_opts: { client: unknown; logger: Logger; signal: AbortSignal }): Promise<ControllerManagerHandle> {
  return { close: async () => {} };
}
