/**
 * The probe results cache (kubelet prober/results): the last settled outcome per container ID and
 * probe type, written by probe workers and read by the status computation and computePodActions.
 * Keyed by container ID so a restarted container never inherits its predecessor's result.
 */
import type { ProbeOutcome, ProbeType } from './handlers.js';

export class ProbeResults {
  readonly #m = new Map<string, ProbeOutcome>();

  get(containerId: string, type: ProbeType): ProbeOutcome | undefined {
    return this.#m.get(`${containerId}/${type}`);
  }

  /** Returns true when the stored outcome changed. */
  set(containerId: string, type: ProbeType, outcome: ProbeOutcome): boolean {
    const k = `${containerId}/${type}`;
    if (this.#m.get(k) === outcome) return false;
    this.#m.set(k, outcome);
    return true;
  }

  delete(containerId: string, type: ProbeType): void {
    this.#m.delete(`${containerId}/${type}`);
  }
}

/** What the pod status and computePodActions need to know from the prober. */
export interface ProbeView {
  /** Readiness for a running container: true without a readinessProbe. */
  ready(containerId: string, hasReadinessProbe: boolean, hasStartupProbe: boolean): boolean;
  /** Started (startup probe passed) for a running container: true without a startupProbe. */
  started(containerId: string, hasStartupProbe: boolean): boolean;
  /** Which probe asks for this running container to be killed, if any. */
  failed(containerId: string): 'liveness' | 'startup' | undefined;
}

export function probeView(r: ProbeResults): ProbeView {
  const started = (id: string, hasStartup: boolean) => !hasStartup || r.get(id, 'startup') === 'success';
  return {
    started,
    ready: (id, hasReadiness, hasStartup) => started(id, hasStartup) && (!hasReadiness || r.get(id, 'readiness') === 'success'),
    failed: (id) => (r.get(id, 'liveness') === 'failure' ? 'liveness' : r.get(id, 'startup') === 'failure' ? 'startup' : undefined),
  };
}
