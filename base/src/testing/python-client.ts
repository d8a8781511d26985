/**
 * The official Kubernetes Python client (Debian's python3-kubernetes, with python3-pytest; both
 * installed by `make deps`) for tests that drive a nodelet API server with a client nobody here
 * wrote. A pytest file reads where the server is from environment variables the test sets
 * (NODELET_API_URL and NODELET_API_TOKEN, or NODELET_KUBECONFIG).
 */
import { spawn, spawnSync } from 'node:child_process';

/** Debian's interpreter, where python3-kubernetes lives (a `python3` earlier on PATH may be another). */
export const PYTHON = '/usr/bin/python3';

/** Why the Python client tests cannot run here (a skip reason), or false when they can. */
export function pythonClientUnavailableReason(): string | false {
  const ok = (mod: string): boolean => spawnSync(PYTHON, ['-c', `import ${mod}`], { stdio: 'ignore' }).status === 0;
  if (!ok('kubernetes')) return 'python3-kubernetes is not installed (make deps)';
  if (!ok('pytest')) return 'python3-pytest is not installed (make deps)';
  return false;
}

export interface PytestRun {
  code: number | null;
  /** pytest's report (stdout and stderr together, in order). */
  output: string;
}

/**
 * Runs one pytest file, without writing caches or bytecode beside it, with `env` (the variables
 * the file reads) added to ours. Spawned asynchronously: an in-process server answers from this
 * process's event loop meanwhile.
 */
export function runPytest(file: string, env: Record<string, string>): Promise<PytestRun> {
  const child = spawn(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-rA', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}
