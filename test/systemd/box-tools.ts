/**
 * Small helpers the systemd nspawn test uses on top of a booted SystemdBox: the real CLI inside the
 * container, unit state from `systemctl show`, the host's kubectl in the container's network
 * namespace, and the bind mounts that give the container a working containerd + CNI.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecResult, SystemdBox } from './nspawn.js';

/** Host files the container needs for a real containerd, runc and the CNI plugins (read-only). */
export const RUNTIME_BINDS: Array<[string, string]> = [
  ['/usr/bin/containerd', '/usr/bin/containerd'],
  ['/usr/bin/containerd-shim-runc-v2', '/usr/bin/containerd-shim-runc-v2'],
  ['/usr/sbin/runc', '/usr/sbin/runc'],
  ['/usr/bin/ctr', '/usr/bin/ctr'],
  ['/usr/lib/cni', '/usr/lib/cni'],
  // The distro unit the nodelet drop-in (containerd.service.d/10-nodelet.conf) extends.
  ['/lib/systemd/system/containerd.service', '/lib/systemd/system/containerd.service'],
];

/** Why the container cannot get a containerd, or undefined. */
export function runtimeUnavailable(): string | undefined {
  const missing = RUNTIME_BINDS.map(([host]) => host).filter((p) => !existsSync(p));
  return missing.length ? `host lacks ${missing.join(', ')} (apt-get install containerd runc containernetworking-plugins)` : undefined;
}

export interface UnitState {
  mainPid: number;
  nRestarts: number;
  activeState: string;
}

export async function unitState(box: SystemdBox, unit: string): Promise<UnitState> {
  const r = await box.exec(['systemctl', 'show', '-p', 'MainPID,NRestarts,ActiveState', unit]);
  const kv = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
  return { mainPid: Number(kv.MainPID), nRestarts: Number(kv.NRestarts), activeState: kv.ActiveState ?? '' };
}

/** Runs the installed checkout's CLI inside the container, as an operator would. */
export function nodeletIn(box: SystemdBox, args: string[], opts: { allowFail?: boolean } = {}): Promise<ExecResult> {
  return box.exec(['/usr/local/bin/node', '/opt/nodelet/bin/nodelet', ...args], { timeoutMs: 120_000, ...opts });
}

/** The host's kubectl, run in the container's network namespace (the API server listens on its 127.0.0.1). */
export function kubectlIn(box: SystemdBox, kubeconfig: string, args: string[], input?: string): Promise<ExecResult> {
  return new Promise((resolve) => {
    const p = spawn('nsenter', ['-t', String(box.leaderPid), '-n', '--', 'kubectl', '--kubeconfig', kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    p.stdin.on('error', () => {}); // EPIPE when kubectl exits early; its exit code tells
    p.stdin.end(input ?? '');
  });
}

export async function kubectlJson<T>(box: SystemdBox, kubeconfig: string, args: string[]): Promise<T | undefined> {
  const r = await kubectlIn(box, kubeconfig, [...args, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as T) : undefined;
}

interface Condition {
  type: string;
  status: string;
  lastHeartbeatTime?: string;
}

/** The node's Ready condition, if the node exists. */
export async function readyCondition(box: SystemdBox, kubeconfig: string, node: string): Promise<Condition | undefined> {
  const n = await kubectlJson<{ status?: { conditions?: Condition[] } }>(box, kubeconfig, ['get', 'node', node]);
  return n?.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Every path under the directories nodelet installs into, for the "uninstall leaves nothing" check. */
export async function listInstallDirs(box: SystemdBox): Promise<Set<string>> {
  const r = await box.exec(['sh', '-c', 'find /etc /usr/local /var/lib /opt -xdev 2>/dev/null | sort']);
  return new Set(r.stdout.trim().split('\n'));
}

/**
 * nspawn mounts the host's cgroup v1 controllers read-only; runc (cgroupfs driver) must create the
 * pods' cgroups in them, so make them writable inside this container's mount namespace.
 */
export async function makeCgroupControllersWritable(box: SystemdBox): Promise<void> {
  await box.exec(['sh', '-c', 'mount -o remount,rw /sys/fs/cgroup && for c in /sys/fs/cgroup/*; do case $c in */systemd|*/unified) ;; *) mount -o remount,bind,rw "$c";; esac; done']);
}

/**
 * Those pod cgroups live in the HOST's v1 hierarchies (<controller>/k8s.io/<id>), shared with other
 * containerds on this machine: after the container is gone, remove only the (empty) cgroups named
 * after sandboxes/containers our own containerd root knows.
 */
export function removeOurPodCgroups(containerdRoot: string): void {
  const ids = new Set<string>();
  for (const kind of ['sandboxes', 'containers']) {
    const d = join(containerdRoot, 'io.containerd.grpc.v1.cri', kind);
    if (existsSync(d)) for (const id of readdirSync(d)) if (/^[0-9a-f]{64}$/.test(id)) ids.add(id);
  }
  for (const ctrl of readdirSync('/sys/fs/cgroup')) {
    for (const id of ids) {
      const p = join('/sys/fs/cgroup', ctrl, 'k8s.io', id);
      if (!existsSync(p)) continue;
      try {
        rmdirSync(p);
      } catch {
        // still has processes or is not a cgroup: leave it
      }
    }
  }
}

/** The v1/v2 hierarchies under /sys/fs/cgroup that hold a kubelet-layout `kubepods` cgroup now. */
export function hierarchiesWithKubepods(): Set<string> {
  return new Set(readdirSync('/sys/fs/cgroup').filter((c) => existsSync(join('/sys/fs/cgroup', c, 'kubepods'))));
}

/**
 * The installed agent keeps kubelet's default (cgroupsPerQOS, cgroupRoot "/"), and on this v1 host
 * nspawn shares the controller hierarchies with the box: its kubepods tree is made at the HOST's
 * hierarchy roots and outlives the box (kubelet leaves kubepods behind when it stops, so uninstall
 * does too). After the box is gone, remove the (empty) tree from every hierarchy where it did not
 * exist before the test, deepest first; a cgroup still holding processes is left and named.
 */
export function removeBoxKubepods(existedBefore: Set<string>): string[] {
  const left: string[] = [];
  const removeTree = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left.push(`${dir}: ${(err as Error).message}`);
    }
  };
  for (const c of hierarchiesWithKubepods()) if (!existedBefore.has(c)) removeTree(join('/sys/fs/cgroup', c, 'kubepods'));
  return left;
}

/** The agent's last "Pod sync failed" error, to say why a pod does not start. */
export async function lastPodSyncError(box: SystemdBox): Promise<string> {
  const j = await box.exec(['journalctl', '-u', 'nodelet-agent', '--no-pager', '-o', 'cat'], { allowFail: true });
  const lines = j.stdout.split('\n').filter((l) => l.includes('"Pod sync failed"'));
  const last = lines.at(-1);
  if (!last) return '(no "Pod sync failed" in the agent journal)';
  try {
    return String((JSON.parse(last) as { err?: unknown }).err);
  } catch {
    return last;
  }
}
