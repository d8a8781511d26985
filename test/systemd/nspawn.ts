/**
 * Boots a real systemd as PID 1 in a container with systemd-nspawn (docs/reference/systemd-testing.md
 * §4), for tests of nodelet's units. The host's node binary and this checkout are bind-mounted
 * read-only; the rootfs comes from a cached debootstrap tarball (test/systemd/rootfs.sh) and the
 * container writes to a tmpfs overlay (--volatile=overlay), so runs leave nothing behind.
 *
 *   const box = await bootSystemd({ name: 'units' });   // ~0.5 s with a cached rootfs
 *   await box.exec(['systemctl', 'is-active', 'nodelet-server']);
 *   await box.close();                                  // halt, remove cgroups and the rootfs
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, existsSync, writeFileSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { pollUntil } from '@nodelet/base';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

export interface SystemdBox {
  readonly name: string;
  readonly leaderPid: number;
  /** Runs a command inside the container (all namespaces of its PID 1). */
  exec(argv: string[], opts?: { input?: string; timeoutMs?: number; allowFail?: boolean }): Promise<ExecResult>;
  /** Polls `check` until it returns true or the deadline passes. */
  waitFor(what: string, check: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Why the nspawn suite cannot run here, or undefined when it can. */
export function nspawnUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  for (const bin of ['systemd-nspawn', 'nsenter', 'zstd', 'debootstrap']) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) return `${bin} is not installed`;
  }
  if (!existsSync('/sys/fs/cgroup/systemd') && !existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    return 'no name=systemd or cgroup2 hierarchy mounted';
  }
  return undefined;
}

const CGROUP_ROOTS = ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'];

function rmCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    try {
      if (statSync(p).isDirectory()) rmCgroupTree(p);
    } catch {
      // Gone meanwhile: the kernel removes a cgroup once its last process exits.
    }
  }
  try {
    rmdirSync(dir);
  } catch {
    // Still busy (EBUSY) or already gone: close() retries for a few seconds.
  }
}

export interface BootOptions {
  name: string;
  /** Extra read-only binds, [host path, container path]. */
  binds?: Array<[string, string]>;
  /** Writable binds (e.g. /var/lib/containerd: overlayfs snapshots cannot live on the tmpfs overlay). */
  rwBinds?: Array<[string, string]>;
  privateNetwork?: boolean;
  /** The nodelet tree mounted at /opt/nodelet (default: this checkout). */
  tree?: string;
  /** More systemd-nspawn flags (e.g. --capability=…). */
  nspawnArgs?: string[];
  /** Environment for systemd-nspawn itself (e.g. SYSTEMD_NSPAWN_API_VFS_WRITABLE). */
  nspawnEnv?: Record<string, string>;
}

export async function bootSystemd(opts: BootOptions): Promise<SystemdBox> {
  const built = spawnSync('bash', [join(REPO_ROOT, 'test/systemd/rootfs.sh')], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`building the test rootfs failed: ${built.stderr.trim()}`);
  const tarball = built.stdout.trim();
  const work = mkdtempSync(join(tmpdir(), `nodelet-nspawn-${opts.name}-`));
  const root = join(work, 'root');
  mkdirSync(root);
  const x = spawnSync('sh', ['-c', `zstd -dc "${tarball}" | tar -C "${root}" -xf -`]);
  if (x.status !== 0) throw new Error(`extracting ${tarball} failed: ${x.stderr}`);

  const machine = `nodelet-${opts.name}-${process.pid}`.slice(0, 60);
  const cg = `nodelet-it-${process.pid}-${opts.name}`;
  const cgDirs = CGROUP_ROOTS.filter((r) => existsSync(r)).map((r) => join(r, cg));
  for (const d of cgDirs) mkdirSync(d, { recursive: true });
  const binds = [['/usr/bin/node', '/usr/local/bin/node'], [opts.tree ?? REPO_ROOT, '/opt/nodelet'], ...(opts.binds ?? [])];
  const args = [
    '-q', '-D', root, '-b', '--volatile=overlay', '--register=no', '--keep-unit',
    `--machine=${machine}`, '--console=pipe',
    ...(opts.privateNetwork === false ? [] : ['--private-network']),
    ...binds.map(([from, to]) => `--bind-ro=${from}:${to}`),
    ...(opts.rwBinds ?? []).map(([from, to]) => `--bind=${from}:${to}`),
    ...(opts.nspawnArgs ?? []),
  ];
  // nspawn must start from its own cgroup, or it creates /payload at the top of the host hierarchies.
  const joinCg = cgDirs.map((d) => `echo $$ > ${d}/cgroup.procs`).join('; ');
  const logPath = join(work, 'nspawn.log');
  writeFileSync(logPath, '');
  const child: ChildProcess = spawn('sh', ['-c', `${joinCg}; exec systemd-nspawn "$@" >>"${logPath}" 2>&1`, 'sh', ...args], {
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { ...process.env, ...opts.nspawnEnv },
    detached: true,
  });
  const nspawnPid = child.pid!;
  let exited = false;
  const exitedP = new Promise<void>((r) => child.on('exit', () => { exited = true; r(); }));

  const close = async (): Promise<void> => {
    if (!exited) {
      process.kill(nspawnPid, 'SIGTERM');
      const guard = setTimeout(() => {
        try {
          process.kill(nspawnPid, 'SIGKILL');
        } catch {
          // Exited just now: nothing to kill.
        }
      }, 30_000);
      await exitedP;
      clearTimeout(guard);
    }
    // Processes of the container may still be exiting (EBUSY): retry for a few seconds.
    const until = Date.now() + 10_000;
    for (;;) {
      for (const d of cgDirs) rmCgroupTree(d);
      if (!cgDirs.some((d) => existsSync(d)) || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    rmSync('/run/systemd/nspawn', { recursive: true, force: true });
    spawnSync('umount', ['-R', root]);
    rmSync(work, { recursive: true, force: true });
  };

  const run = (argv: string[], input?: string, timeoutMs = 60_000): Promise<ExecResult> =>
    new Promise((resolveRun) => {
      const p = spawn('nsenter', ['-t', String(leader), '-m', '-u', '-i', '-n', '-p', '--', ...argv], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8' },
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
      p.on('close', (code) => { clearTimeout(t); resolveRun({ code: code ?? -1, stdout, stderr }); });
      // nsenter may exit before reading stdin (EPIPE): its exit code is what counts.
      p.stdin.on('error', () => {});
      p.stdin.end(input ?? '');
    });

  // A container that exits will never get there: stop waiting at once.
  const gone = new AbortController();
  void exitedP.then(() => gone.abort(new Error('the container exited')));
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
    try {
      await pollUntil(what, check, { timeoutMs, signal: gone.signal });
    } catch (err) {
      throw gone.signal.aborted ? new Error(`container exited while waiting for ${what}`, { cause: err }) : err;
    }
  };

  let leader = 0;
  try {
    await waitFor('the container systemd to start', async () => {
      const r = spawnSync('pgrep', ['-P', String(nspawnPid), '-x', 'systemd'], { encoding: 'utf8' });
      leader = Number(r.stdout.trim().split('\n')[0] ?? 0);
      return leader > 0;
    }, 20_000);
    await waitFor('systemd to finish booting', async () => {
      const r = await run(['systemctl', 'is-system-running', '--wait'], undefined, 10_000);
      return /running|degraded/.test(r.stdout);
    }, 30_000);
  } catch (err) {
    await close();
    throw err;
  }

  return {
    name: machine,
    leaderPid: leader,
    async exec(argv, o = {}) {
      const r = await run(argv, o.input, o.timeoutMs);
      if (r.code !== 0 && !o.allowFail) {
        throw new Error(`'${argv.join(' ')}' failed in the container (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
      }
      return r;
    },
    waitFor,
    close,
  };
}
