export { ProbeManager, type ProbeManagerOptions } from './prober.js';
export { ProbeResults, probeView, type ProbeView } from './results.js';
export { runProbe, resolvePort, type ExecRunner, type ProbeOutcome, type ProbeResult, type ProbeTarget, type ProbeType } from './handlers.js';
