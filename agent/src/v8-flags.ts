/**
 * V8 flags the agent sets on itself when its entry (main.ts) loads, before any other module of
 * the agent is evaluated: flags that node refuses in NODE_OPTIONS (so they cannot sit beside
 * AGENT_NODE_OPTIONS in the systemd unit) but that V8 reads each time it decides, so setting them
 * at run time takes effect (docs/performance.md, "Issue 28 item 3, fourth pass").
 *
 * - `--no-sparkplug`: no baseline (Sparkplug) machine code. V8 gives baseline code to every
 *   function that has run a little (about 1,800 of the agent's at 30 pods, most of them start-up
 *   and per-pod-start code run a few times) and never flushes it, and a function with baseline
 *   code also keeps its bytecode and feedback for the life of the process. Without it, code that
 *   is no longer run has its bytecode flushed by the GC as usual, and the hot code (the PLEG's
 *   relist, the CRI and API decoders) is optimized by TurboFan as before. What it costs: warm code
 *   runs in the interpreter instead of baseline code (measured beside it in the doc).
 */
import { setFlagsFromString } from 'node:v8';

/** The flags, as given to `v8.setFlagsFromString`. */
export const AGENT_RUNTIME_V8_FLAGS = '--no-sparkplug';

setFlagsFromString(AGENT_RUNTIME_V8_FLAGS);
