/**
 * One bash session that types a doc's commands as a user would (docs.itest.ts): variables,
 * `cd` and background jobs carry over from one command to the next, each command's stdin is
 * /dev/null unless it pipes its own, and its output and exit code come back per command.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';

export interface Typed {
  code: number;
  output: string;
}

export class DocShell {
  readonly #bash: ChildProcessWithoutNullStreams;
  #buf = '';
  #waiter: (() => void) | undefined;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // Its own process group, so close() ends whatever a hung command left running.
    this.#bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: 'pipe', detached: true });
    const take = (d: Buffer): void => {
      this.#buf += d.toString();
      this.#waiter?.();
    };
    this.#bash.stdout.on('data', take);
    this.#bash.stderr.on('data', take);
  }

  /** Runs `command`; resolves with its exit code and output, or rejects after `timeoutMs`. */
  async type(command: string, timeoutMs: number): Promise<Typed> {
    const end = `__docs_test_${randomUUID()}__`;
    this.#buf = '';
    this.#bash.stdin.write(`{ ${command}\n} </dev/null 2>&1; echo "${end}$?"\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.#buf.indexOf(end);
      if (at >= 0) {
        const rest = this.#buf.slice(at + end.length);
        const nl = rest.indexOf('\n');
        if (nl >= 0) return { code: Number(rest.slice(0, nl)), output: this.#buf.slice(0, at) };
      }
      if (Date.now() > deadline) throw new Error(`no end within ${timeoutMs} ms; output so far:\n${this.#buf.slice(-2000)}`);
      await new Promise<void>((res) => {
        const t = setTimeout(res, 500);
        this.#waiter = () => {
          clearTimeout(t);
          res();
        };
      });
      this.#waiter = undefined;
    }
  }

  /** Ends the session and every background job it started. */
  async close(): Promise<void> {
    if (this.#bash.exitCode !== null) return;
    const gone = new Promise((res) => this.#bash.once('exit', res));
    this.#bash.stdin.end('kill $(jobs -p) 2>/dev/null; exit 0\n');
    const timer = setTimeout(() => {
      try {
        process.kill(-this.#bash.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5_000);
    await gone;
    clearTimeout(timer);
  }
}
