import { spawn } from 'node:child_process';
import { AgentError } from '@nodelet/base';

/**
 * Runs a short-lived helper program (gcc, `busybox --list`) to completion. Rejects with ERR_INTERNAL carrying
 * the tail of stderr when it exits non-zero, ERR_FAILED_PRECONDITION when it is not installed,
 * and with the AbortError when `signal` fires (the child is killed).
 */
export function runTool(cmd: string, args: readonly string[], opts: { cwd?: string; signal?: AbortSignal } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new AgentError('ERR_FAILED_PRECONDITION', `"${cmd}" is not installed (needed to build images)`, { cause: err }));
      else reject(err);
    });
    child.on('close', (code, sig) => {
      if (code === 0) resolve(stdout);
      else if (!opts.signal?.aborted) {
        reject(new AgentError('ERR_INTERNAL', `${cmd} ${sig ? `was killed by ${sig}` : `exited with ${code}`}: ${stderr.trim() || '(no output)'}`));
      }
    });
  });
}
