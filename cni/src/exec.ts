import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { abortError, delay } from '@nodelet/base';
import { CniCode, CniError } from './errors.js';
import { snippet } from './version.js';

/** One plugin execution: the binary, the CNI_* environment and the request on stdin. */
export interface ExecRequest {
  /** Plugin type, for error messages. */
  plugin: string;
  path: string;
  env: Record<string, string>;
  stdin: Buffer;
  signal?: AbortSignal;
  /** Kill the plugin (and its process group) after this long. */
  timeoutMs: number;
}

/**
 * The process boundary of the engine. The real one spawns binaries; tests may substitute a
 * fake (`@nodelet/cni/testing` FakePluginExecutor).
 */
export interface PluginExecutor {
  /** Absolute path of plugin `type` in the first of `dirs` that holds it (CNI_PATH search). */
  findPlugin(type: string, dirs: readonly string[]): Promise<string>;
  /** Runs the plugin; resolves with stdout on exit 0, throws CniError otherwise. */
  execPlugin(req: ExecRequest): Promise<string>;
}

const MAX_OUTPUT = 8 * 1024 * 1024;

export interface RawExecOptions {
  /** Attempts on "text file busy" (a binary still being written); libcni uses 5, 1 s apart. */
  textBusyRetries?: number;
  textBusyDelayMs?: number;
}

/** Spawns plugin binaries the way libcni's pkg/invoke does. */
export class RawPluginExecutor implements PluginExecutor {
  readonly #retries: number;
  readonly #retryDelayMs: number;

  constructor(opts: RawExecOptions = {}) {
    this.#retries = opts.textBusyRetries ?? 5;
    this.#retryDelayMs = opts.textBusyDelayMs ?? 1000;
  }

  async findPlugin(type: string, dirs: readonly string[]): Promise<string> {
    for (const dir of dirs) {
      const p = join(dir, type);
      try {
        if (!(await stat(p)).isFile()) continue;
      } catch {
        continue;
      }
      try {
        await access(p, constants.X_OK);
      } catch {
        throw new CniError({ cniCode: CniCode.Internal, msg: 'plugin is not executable', details: `${p}: chmod +x it or reinstall the CNI plugins`, plugin: type, code: 'ERR_FAILED_PRECONDITION' });
      }
      return p;
    }
    throw new CniError({
      cniCode: CniCode.Internal,
      msg: 'failed to find plugin',
      details: `no "${type}" in CNI path [${dirs.join(', ')}]; install it or add its directory to the bin dirs`,
      plugin: type,
      code: 'ERR_FAILED_PRECONDITION',
    });
  }

  async execPlugin(req: ExecRequest): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(req);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ETXTBSY' || attempt >= this.#retries) throw translateSpawnError(req, err);
        await delay(this.#retryDelayMs, req.signal);
      }
    }
  }

  #once(req: ExecRequest): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal.reason));
      // Own process group, so a timeout also kills what the plugin spawned (iptables, IPAM).
      const child = spawn(req.path, [], { env: { ...process.env, ...req.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let size = 0;
      let failure: Error | undefined;
      let settled = false;
      const kill = (why: Error): void => {
        failure ??= why;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const timer = setTimeout(
        () => kill(new CniError({ cniCode: CniCode.Internal, msg: `timed out after ${req.timeoutMs} ms; the plugin was killed`, plugin: req.plugin, code: 'ERR_DEADLINE_EXCEEDED', retryable: true })),
        req.timeoutMs,
      );
      const onAbort = (): void => kill(abortError(req.signal?.reason));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const collect = (into: Buffer[]) => (b: Buffer) => {
        size += b.length;
        if (size > MAX_OUTPUT) kill(new CniError({ cniCode: CniCode.DecodingFailure, msg: `printed more than ${MAX_OUTPUT} bytes`, plugin: req.plugin }));
        else into.push(b);
      };
      child.stdout.on('data', collect(out));
      child.stderr.on('data', collect(errOut));
      child.stdin.on('error', () => {}); // EPIPE when a plugin exits without reading stdin
      child.on('error', (err) => finish(() => reject(err)));
      child.on('close', (code, sig) => {
        finish(() => {
          if (failure) return reject(failure);
          const stdout = Buffer.concat(out).toString('utf8');
          const stderr = Buffer.concat(errOut).toString('utf8');
          if (code === 0) return resolve(stdout);
          reject(pluginFailure(req.plugin, code, sig, stdout, stderr));
        });
      });
      child.stdin.end(req.stdin);
    });
  }
}

function translateSpawnError(req: ExecRequest, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES') return new CniError({ cniCode: CniCode.Internal, msg: 'plugin is not executable', details: req.path, plugin: req.plugin, code: 'ERR_FAILED_PRECONDITION', cause: err });
  if (code === 'ENOENT') return new CniError({ cniCode: CniCode.Internal, msg: 'plugin binary disappeared or its interpreter is missing', details: req.path, plugin: req.plugin, code: 'ERR_FAILED_PRECONDITION', cause: err });
  if (code === 'ETXTBSY') return new CniError({ cniCode: CniCode.TryAgainLater, msg: 'plugin binary is busy (text file busy)', details: req.path, plugin: req.plugin, cause: err });
  if (code === 'ENOEXEC') return new CniError({ cniCode: CniCode.Internal, msg: 'plugin is not a valid executable', details: req.path, plugin: req.plugin, code: 'ERR_FAILED_PRECONDITION', cause: err });
  return err;
}

/**
 * A non-zero exit, as libcni's pluginErr reads it: the spec error JSON on stdout, else the
 * stderr text. Debian's plugins omit cniVersion in their error JSON, so it is not required.
 */
export function pluginFailure(plugin: string, code: number | null, sig: NodeJS.Signals | null, stdout: string, stderr: string): CniError {
  const exit = sig ? `killed by ${sig}` : `exit status ${code}`;
  if (stdout.trim() !== '') {
    try {
      const e = JSON.parse(stdout) as { code?: unknown; msg?: unknown; details?: unknown };
      if (typeof e === 'object' && e !== null && typeof e.code === 'number' && typeof e.msg === 'string') {
        return new CniError({ cniCode: e.code, msg: e.msg, details: typeof e.details === 'string' && e.details !== '' ? e.details : undefined, plugin });
      }
    } catch {
      // Not JSON: reported below as output that is not a CNI error, with the output itself.
    }
    return new CniError({ cniCode: CniCode.DecodingFailure, msg: `failed with ${exit} and output that is not a CNI error`, details: `stdout: ${snippet(stdout)}${stderr.trim() ? `; stderr: ${snippet(stderr)}` : ''}`, plugin });
  }
  return new CniError({ cniCode: CniCode.Internal, msg: `netplugin failed with ${exit}`, details: stderr.trim() ? snippet(stderr, 1000) : 'no output on stdout or stderr', plugin });
}
