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
  /** Runs `argv` (stdin piped from `input`); resolves with the exit code and output, never throws on a non-zero exit. */
  run(argv: readonly string[], o: { input?: string; signal: AbortSignal; timeoutMs?: number }): Promise<ExecResult>;
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
  };
}
