/**
 * Host checks that need nothing but the kernel's files: forwarding, bridge netfilter, cgroups,
 * swap, free ports, clock, disk. Each reads from an injectable root so tests can plant faults.
 */
import { readFileSync, existsSync, statfsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Check, CheckResult } from './check.js';

export interface HostCheckOptions {
  /** Prefix for /proc and /sys reads (tests). */
  root?: string;
  /** TCP ports that must be free (node API 10250, healthz 10248, …). */
  ports?: Array<{ port: number; host: string; what: string }>;
  /** Directories whose filesystems must have room. */
  disks?: Array<{ path: string; what: string }>;
}

const read = (root: string, p: string): string | undefined => {
  try {
    return readFileSync(join(root, p), 'utf8').trim();
  } catch {
    return undefined;
  }
};

function sysctlCheck(root: string, id: string, path: string, want: string, fix: string, level: 'warn' | 'fail'): Check {
  return {
    id,
    title: path,
    async run() {
      const v = read(root, path);
      if (v === undefined) return { id, level: 'warn', message: `${path} does not exist`, fix };
      if (v === want) return { id, level: 'pass', message: `${path} = ${v}` };
      return { id, level, message: `${path} = ${v}, want ${want}`, fix };
    },
  };
}

function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

export function hostChecks(o: HostCheckOptions = {}): Check[] {
  const root = o.root ?? '/';
  const checks: Check[] = [
    sysctlCheck(root, 'net.ip_forward', 'proc/sys/net/ipv4/ip_forward', '1', 'sysctl -w net.ipv4.ip_forward=1 (persist in /etc/sysctl.d/99-nodelet.conf)', 'fail'),
    sysctlCheck(
      root, 'net.bridge-nf-call-iptables', 'proc/sys/net/bridge/bridge-nf-call-iptables', '1',
      'modprobe br_netfilter && sysctl -w net.bridge.bridge-nf-call-iptables=1 (Service traffic between pods on one bridge needs it)', 'warn',
    ),
    {
      id: 'cgroups',
      title: 'cgroups',
      async run(): Promise<CheckResult> {
        const v2 = existsSync(join(root, 'sys/fs/cgroup/cgroup.controllers'));
        const v1 = existsSync(join(root, 'sys/fs/cgroup/memory')) && existsSync(join(root, 'sys/fs/cgroup/cpu'));
        const hybrid = existsSync(join(root, 'sys/fs/cgroup/unified'));
        if (v2) return { id: 'cgroups', level: 'pass', message: 'cgroup v2 (unified) mounted' };
        if (v1) return { id: 'cgroups', level: 'pass', message: `cgroup v1${hybrid ? ' + unified (hybrid)' : ''} mounted with cpu and memory controllers` };
        return { id: 'cgroups', level: 'fail', message: 'no cgroup hierarchy with cpu and memory controllers', fix: 'mount cgroup2 on /sys/fs/cgroup (systemd does this at boot)' };
      },
    },
    {
      id: 'swap',
      title: 'swap',
      async run(): Promise<CheckResult> {
        const swaps = read(root, 'proc/swaps');
        const active = (swaps ?? '').split('\n').slice(1).filter((l) => l.trim()).length;
        if (active === 0) return { id: 'swap', level: 'pass', message: 'swap is off' };
        return { id: 'swap', level: 'warn', message: `${active} swap device(s) active; memory limits and eviction assume no swap`, fix: 'swapoff -a (and remove swap from /etc/fstab)' };
      },
    },
    {
      id: 'clock',
      title: 'clock',
      async run(): Promise<CheckResult> {
        // Certificates are checked against the clock: a clock before the build date is surely wrong.
        const year = new Date().getUTCFullYear();
        if (year < 2025) return { id: 'clock', level: 'fail', message: `system clock says ${new Date().toISOString()}`, fix: 'set the time (timedatectl set-ntp true, or date -s)' };
        const sync = read(root, 'run/systemd/timesync/synchronized');
        return { id: 'clock', level: 'pass', message: `system clock ${new Date().toISOString()}${sync === undefined ? '' : ' (NTP synchronized)'}` };
      },
    },
  ];
  for (const p of o.ports ?? []) {
    checks.push({
      id: `port.${p.port}`,
      title: `port ${p.port}`,
      async run() {
        const free = await portFree(p.port, p.host);
        return free
          ? { id: `port.${p.port}`, level: 'pass', message: `${p.host}:${p.port} (${p.what}) is free` }
          : { id: `port.${p.port}`, level: 'fail', message: `${p.host}:${p.port} (${p.what}) is in use`, fix: `find the owner with \`ss -ltnp 'sport = :${p.port}'\` and stop it, or configure another port` };
      },
    });
  }
  for (const d of o.disks ?? []) {
    checks.push({
      id: `disk.${d.what}`,
      title: `disk ${d.path}`,
      async run() {
        let st;
        try {
          st = statfsSync(d.path);
        } catch {
          return { id: `disk.${d.what}`, level: 'warn', message: `${d.path} does not exist yet`, fix: `create it, or check the ${d.what} setting` };
        }
        const freePct = (st.bavail / st.blocks) * 100;
        const freeGiB = (st.bavail * st.bsize) / 2 ** 30;
        const msg = `${d.path} (${d.what}): ${freeGiB.toFixed(1)} GiB free (${freePct.toFixed(0)} %)`;
        if (freePct < 10) return { id: `disk.${d.what}`, level: 'fail', message: msg, fix: 'free space: below 10 % the agent evicts pods (nodefs.available<10%)' };
        if (freePct < 15) return { id: `disk.${d.what}`, level: 'warn', message: msg, fix: 'free space: image GC starts at 85 % used' };
        return { id: `disk.${d.what}`, level: 'pass', message: msg };
      },
    });
  }
  return checks;
}
