/**
 * Pod admission on the node (kubelet lifecycle.PodAdmitHandler): before a new pod gets a worker,
 * every handler may refuse it. A refused pod never gets a sandbox: it fails at once with the
 * handler's reason, the message prefixed "Pod was rejected: ", and a Warning event of that reason
 * (kubelet rejectPod), so `kubectl get pods` shows e.g. `Evicted`, `OutOfcpu` or `NodeShutdown`.
 *
 *   PodWorkers.update(new pod) ──▶ admit(pod, admitted pods) ──▶ ok: worker syncs it
 *                                                        └──▶ refused: worker terminates it at once,
 *                                                             status Failed/<reason>, event
 *
 * Handlers, in kubelet's order: node-pressure eviction (pressure.ts), node shutdown (shutdown.ts),
 * the resource fit against the node's allocatable (resource-fit.ts). Only pods that are new to the
 * node are judged: a pod the runtime already runs (the agent restarted) was admitted before.
 */
import type { Pod, PodStatus } from '@nodelet/api/agent';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';

export type PodAdmitResult = { admit: true } | { admit: false; reason: string; message: string };

/** One admission rule. `admitted`: the pods this node already runs (their workers are not finished). */
export type PodAdmitHandler = (pod: Pod, admitted: readonly Pod[]) => PodAdmitResult;

export const ADMIT: PodAdmitResult = { admit: true };

/** The first refusal of `handlers`, or admit. */
export function admitPod(handlers: readonly PodAdmitHandler[], pod: Pod, admitted: readonly Pod[]): PodAdmitResult {
  for (const h of handlers) {
    const r = h(pod, admitted);
    if (!r.admit) return r;
  }
  return ADMIT;
}

/** The status of a refused pod (kubelet rejectPod): phase Failed, the reason, "Pod was rejected: <message>". */
export function rejectedStatus(reason: string, message: string): PodStatusFn {
  return (status: PodStatus) => {
    status.phase = 'Failed';
    status.reason = reason;
    status.message = `Pod was rejected: ${message}`;
  };
}
