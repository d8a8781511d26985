/**
 * `nodelet server` as a child process from the sources, for tests that kill a server with
 * SIGKILL (the HA tests). Stopped by the PID we started; the caller removes its data dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childExited, terminateChild } from '@nodelet/base/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface ServerProcess {
  url: string;
  kubeconfig: string;
  /** holderIdentity of this server in the leader Leases. */
  leaderIdentity: string;
  pid: number;
  /** Everything the process wrote so far. */
  output(): string;
  /** The JSON log lines with this `msg`. */
  logs(msg: string): Array<Record<string, unknown>>;
  /** SIGKILL by PID: no shutdown, no lease release. */
  kill(): Promise<void>;
  /** SIGTERM by PID (SIGKILL after 10 s). Idempotent. */
  stop(): Promise<void>;
}

/** Starts `nodelet server` with `args` after the data dir, resolving on its "Server ready" line. */
export async function startServerProcess(o: { dataDir: string; args: string[]; timeoutMs?: number }): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [
    '--conditions=source', '--import', 'tsx', join(ROOT, 'bin', 'nodelet'), 'server', '--data-dir', o.dataDir, '--registry-address', '', ...o.args,
  ], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const timeoutMs = o.timeoutMs ?? 60_000;
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nodelet server did not become ready in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"Server ready"'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`nodelet server exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  const logs = (msg: string): Array<Record<string, unknown>> =>
    output.split('\n').filter((l) => l.startsWith('{') && l.includes(JSON.stringify(msg))).map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.msg === msg);
  try {
    const r = await ready;
    return {
      url: String(r.url), kubeconfig: String(r.kubeconfig), leaderIdentity: String(r.leaderIdentity), pid: child.pid ?? 0,
      output: () => output,
      logs,
      kill: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = childExited(child);
        process.kill(child.pid!, 'SIGKILL');
        await exited;
      },
      stop: () => terminateChild(child, 10_000),
    };
  } catch (err) {
    await terminateChild(child, 10_000);
    throw err;
  }
}
