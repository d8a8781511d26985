/**
 * The runtime's health as the Node's Ready condition needs it (kubelet runtimeState): CRI
 * `Status` (RuntimeReady, NetworkReady), whether the agent's CNI service has a network (a pod
 * CIDR), and whether the PLEG relists. Read by the node reporter for every status update.
 */
import { describeError } from '@nodelet/base';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { RuntimeHealth } from './node-status.js';

const STATUS_TIMEOUT_MS = 5000;

export interface RuntimeHealthOptions {
  runtime: RuntimeService;
  /** From the CRI Version handshake. */
  runtimeName: string;
  runtimeVersion: string;
  /** The CNI service has a network to attach pods to (it knows the pod CIDR). */
  cniReady(): boolean;
  plegHealthy(): boolean;
  /** A node shutdown is in progress (the node shutdown manager). */
  shuttingDown?(): boolean;
}

/** Returns the check the node reporter calls. A failed or slow Status call reads as "runtime down", with the error. */
export function runtimeHealth(o: RuntimeHealthOptions): (signal: AbortSignal) => Promise<RuntimeHealth> {
  return async (signal) => {
    const h: RuntimeHealth = { runtimeReady: false, networkReady: false, cniReady: o.cniReady(), plegHealthy: o.plegHealthy(), shuttingDown: o.shuttingDown?.() ?? false, runtimeName: o.runtimeName, runtimeVersion: o.runtimeVersion };
    if (!h.cniReady) h.cniMessage = 'pod CIDR not yet known (set spec.podCIDR or --pod-cidr)';
    try {
      const st = await o.runtime.status({}, { signal, timeoutMs: STATUS_TIMEOUT_MS });
      const cond = (t: string) => st.status?.conditions.find((x) => x.type === t);
      const rr = cond('RuntimeReady');
      const nr = cond('NetworkReady');
      h.runtimeReady = !!rr?.status;
      h.runtimeMessage = rr?.message || rr?.reason;
      h.networkReady = !!nr?.status;
      h.networkMessage = nr ? `reason:${nr.reason} message:${nr.message}` : undefined;
    } catch (err) {
      h.runtimeMessage = describeError(err);
    }
    return h;
  };
}
