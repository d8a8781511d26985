/**
 * Exec probes over CRI `ExecSync` (the prober's ExecRunner; prober/ itself knows no CRI).
 */
import type { ExecRunner } from '../prober/handlers.js';
import type { RuntimeService } from '../kubecontainer/cri.js';

/**
 * Runs the probe's command in the container. CRI enforces `timeout`; the call's own deadline
 * (`timeout` plus `runtimeRequestTimeoutMs`) only guards against a runtime that does not.
 */
export function criProbeExec(runtime: RuntimeService, runtimeRequestTimeoutMs: number): ExecRunner {
  return {
    execSync: async (containerId, cmd, timeoutS, signal) => {
      const r = await runtime.execSync({ containerId, cmd, timeout: timeoutS }, { signal, timeoutMs: timeoutS * 1000 + runtimeRequestTimeoutMs });
      return { exitCode: r.exitCode, output: Buffer.concat([r.stdout, r.stderr]).toString('utf8') };
    },
  };
}
