/**
 * The agent as a child process (`bin/nodelet-dev agent …` with the harness's arguments), for tests
 * that kill it with SIGKILL and start it again. `bin/nodelet-dev` execs node, so the child's PID is
 * the agent's own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Harness } from './harness.js';

const NODELET_DEV = join(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet-dev');

export interface AgentProcessOptions {
  /** Overrides the harness's `--log-level`. */
  logLevel?: string;
  /** Receives every pino line the agent writes on stdout, parsed (non-JSON lines are skipped). */
  onLog?(line: Record<string, unknown>): void;
}

/** Starts `nodelet agent` with the harness's configuration. */
export function spawnAgent(h: Harness, o: AgentProcessOptions = {}): ChildProcess {
  const args = [...h.agentArgs];
  if (o.logLevel) args[args.indexOf('--log-level') + 1] = o.logLevel;
  const stdout = o.onLog ? 'pipe' : process.env.AGENT_IT_LOG ? 'inherit' : 'ignore';
  const child = spawn(NODELET_DEV, args, { stdio: ['ignore', stdout, 'inherit'] });
  if (o.onLog && child.stdout) {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (process.env.AGENT_IT_LOG) console.error(line);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // not a log record (nothing else is written there, but a stray line must not fail the test)
      }
      if (parsed && typeof parsed === 'object') o.onLog!(parsed as Record<string, unknown>);
    });
  }
  return child;
}

/** Sends `signal` to the child by its PID and waits for it to exit. Does nothing when it already has. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid!, signal);
  await exited;
}
