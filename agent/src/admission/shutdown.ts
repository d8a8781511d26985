/**
 * Admission during a graceful node shutdown (kubelet nodeshutdown manager's Admit): once the
 * shutdown has begun no new pod starts — it would only be killed again within the grace period.
 */
import { ADMIT, type PodAdmitHandler } from './admit.js';

export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = 'NodeShutdown';
export const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = 'Pod was rejected as the node is shutting down.';

export function shutdownAdmitHandler(shuttingDown: () => boolean): PodAdmitHandler {
  return () => (shuttingDown() ? { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE } : ADMIT);
}
