/**
 * Runs the host tools the proxy needs (`nft`, `conntrack`, `sysctl`), optionally inside a named
 * network namespace (`ip netns exec <ns> …`, which is how the integration tests keep their
 * rules off the host). The one place the proxy spawns processes; failures become AgentErrors:
 * a missing binary is ERR_FAILED_PRECONDITION, a non-zero exit ERR_INTERNAL with stderr.
 */
import { spawn } from 'node:child_process';
import { AgentError, abortError } from '@nodelet/base';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandRunner {
  /**
   * Runs `argv` (stdin piped from `input`); resolves with the exit code and output, never throws
   * on a non-zero exit. `onSpawn` gets the process ID as soon as it runs (the table monitor tells
   * the proxy's own nft transactions from others' by it).
   */
  run(argv: readonly string[], o: { input?: string; signal: AbortSignal; timeoutMs?: number; onSpawn?: (pid: number) => void }): Promise<ExecResult>;
  /**
   * Runs a long-lived `argv` (`nft monitor`), handing each stdout line to `onLine`; resolves with
   * its exit code when it ends, or rejects with an AbortError once `signal` aborts (it is killed).
   */
  stream(argv: readonly string[], o: { signal: AbortSignal; onLine: (line: string) => void }): Promise<number>;
  /** The netns the commands run in, if any. */
  readonly netns?: string;
}

const ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };

/** A runner for the host, or for the named netns under /run/netns. */
export function commandRunner(netns?: string): CommandRunner {
  return {
    netns,
    run(argv, o) {
      const full = netns ? ['ip', 'netns', 'exec', netns, ...argv] : [...argv];
      return new Promise<ExecResult>((resolve, reject) => {
        if (o.signal.aborted) return reject(abortError(o.signal.reason));
        const child = spawn(full[0]!, full.slice(1), { env: ENV, stdio: ['pipe', 'pipe', 'pipe'] });
        // `ip netns exec` execs the command in place, so this is nft's own process ID.
        if (child.pid !== undefined) o.onSpawn?.(child.pid);
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        let settled = false;
        const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
        const onAbort = (): void => {
          child.kill('SIGKILL');
        };
        o.signal.addEventListener('abort', onAbort, { once: true });
        const done = (fn: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          o.signal.removeEventListener('abort', onAbort);
          fn();
        };
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => err.push(d));
        child.on('error', (e: NodeJS.ErrnoException) => done(() => reject(e.code === 'ENOENT'
          ? new AgentError('ERR_FAILED_PRECONDITION', `"${full[0]}" is not installed (install the Debian packages nftables and conntrack)`, { cause: e })
          : new AgentError('ERR_INTERNAL', `cannot run "${full[0]}"`, { cause: e }))));
        child.on('close', (code, sig) => done(() => {
          if (o.signal.aborted) return reject(abortError(o.signal.reason));
          const stderr = Buffer.concat(err).toString('utf8');
          if (sig) return reject(new AgentError('ERR_DEADLINE_EXCEEDED', `"${argv.join(' ')}" was killed (${sig}): ${stderr.trim()}`));
          // `ip netns exec` reports a missing netns or binary as exit 1/255 with this text.
          if (netns && /Cannot open network namespace|exec of .* failed: No such file/.test(stderr)) {
            return reject(new AgentError('ERR_FAILED_PRECONDITION', `cannot run "${argv[0]}" in netns "${netns}": ${stderr.trim()}`));
          }
          resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr });
        }));
        child.stdin.on('error', () => {}); // EPIPE when the tool exits before reading; its exit code tells.
        child.stdin.end(o.input ?? '');
      });
    },
    stream(argv, o) {
      const full = netns ? ['ip', 'netns', 'exec', netns, ...argv] : [...argv];
      return new Promise<number>((resolve, reject) => {
        if (o.signal.aborted) return reject(abortError(o.signal.reason));
        const child = spawn(full[0]!, full.slice(1), { env: ENV, stdio: ['ignore', 'pipe', 'ignore'] });
        const onAbort = (): void => {
          child.kill('SIGKILL');
        };
        o.signal.addEventListener('abort', onAbort, { once: true });
        let rest = '';
        let settled = false;
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (d: string) => {
          const lines = (rest + d).split('\n');
          rest = lines.pop()!;
          for (const l of lines) o.onLine(l);
        });
        const done = (fn: () => void): void => {
          if (settled) return;
          settled = true;
          o.signal.removeEventListener('abort', onAbort);
          fn();
        };
        child.on('error', (e: NodeJS.ErrnoException) => done(() => reject(new AgentError(e.code === 'ENOENT' ? 'ERR_FAILED_PRECONDITION' : 'ERR_INTERNAL', `cannot run "${full[0]}"`, { cause: e }))));
        child.on('close', (code) => done(() => (o.signal.aborted ? reject(abortError(o.signal.reason)) : resolve(code ?? 1))));
      });
    },
  };
}
