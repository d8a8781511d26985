import type { Logger } from '@nodelet/base';

/**
 * Resolves with the first SIGTERM (systemd's stop) or SIGINT (Ctrl-C) this process receives,
 * having logged it: what a daemon's main() awaits between READY=1 and its orderly shutdown.
 * A second signal meanwhile gets Node's default handling (exit), so a stuck shutdown can be cut short.
 */
export function untilTerminated(log: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      log.info({ signal }, 'Shutting down');
      resolve(signal);
    };
    const onTerm = (): void => stop('SIGTERM');
    const onInt = (): void => stop('SIGINT');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
  });
}
