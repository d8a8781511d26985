// Host helpers for the CNI integration tests: network namespaces, links and the iptables rules the
// real plugins create. Every test uses its own bridge (nlc<N>) and subnet (10.233.<N>.0/24).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PLUGIN_DIR = '/usr/lib/cni';

/** Why the real-plugin tests cannot run here, or undefined when they can. */
export function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, bridges, iptables)';
  for (const p of ['bridge', 'host-local', 'portmap', 'loopback']) if (!existsSync(`${PLUGIN_DIR}/${p}`)) return `${PLUGIN_DIR}/${p} missing: apt-get install containernetworking-plugins`;
  for (const b of ['/usr/sbin/ip', '/usr/sbin/iptables-save', '/usr/bin/busybox']) if (!existsSync(b) && !existsSync(b.replace('/usr', ''))) return `${b} missing`;
  return undefined;
}

export async function sh(cmd: string, args: string[]): Promise<string> {
  return (await run(cmd, args, { timeout: 20_000 })).stdout;
}

/** Creates netns `name`, first removing a stale one of that name (ours: a killed earlier run). */
export async function addNetns(name: string): Promise<string> {
  await delNetns(name);
  await sh('ip', ['netns', 'add', name]);
  await sh('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
  return `/run/netns/${name}`;
}

export async function delNetns(name: string): Promise<void> {
  await sh('ip', ['netns', 'del', name]).catch(() => undefined);
}

export async function linkExists(name: string, netns?: string): Promise<boolean> {
  const args = netns ? ['netns', 'exec', netns, 'ip', 'link', 'show', name] : ['link', 'show', name];
  return sh('ip', args).then(() => true, () => false);
}

export async function delLink(name: string): Promise<void> {
  await sh('ip', ['link', 'del', name]).catch(() => undefined);
}

/** Host-side veth peers attached to `bridge`. */
/** Ports (host veths) of `bridge`, from sysfs: no process to spawn, nothing to time out under load. */
export async function bridgePorts(bridge: string): Promise<string[]> {
  try {
    return (await readdir(`/sys/class/net/${bridge}/brif`)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export async function inNetns(netns: string, cmd: string[]): Promise<string> {
  return sh('ip', ['netns', 'exec', netns, ...cmd]);
}

/** The CNI-* chains and rules of the nat table, one `iptables-save` line each. */
export async function natCniLines(): Promise<Set<string>> {
  const out = await sh('iptables-save', ['-t', 'nat']);
  return new Set(out.split('\n').filter((l) => /CNI-/.test(l) && (l.startsWith('-A ') || l.startsWith(':'))));
}

/**
 * Undoes what portmap did for this test's networks: first any per-container rules and chains
 * still naming one of `networks` (a failed test may leave them), then portmap's shared
 * CNI-HOSTPORT-* chains and their jump rules, but only if this test created them (absent from
 * `before`) and no other network uses them now (another engineer's pods may).
 */
export async function restoreNat(before: Set<string>, networks: string[]): Promise<void> {
  const ipt = (args: string[]) => sh('iptables', ['-w', '-t', 'nat', ...args]).catch(() => '');
  let now = await natCniLines();
  for (const rule of [...now].filter((l) => networks.some((n) => l.includes(`dnat name: \\"${n}\\"`)))) {
    const target = /-j (CNI-DN-\S+)/.exec(rule)?.[1];
    await ipt(splitRule(rule.replace(/^-A /, '-D ')));
    if (target) {
      await ipt(['-F', target]);
      await ipt(['-X', target]);
    }
  }
  now = await natCniLines();
  const shared = ['CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-SETMARK', 'CNI-HOSTPORT-MASQ'];
  if (shared.some((c) => before.has(`:${c} - [0:0]`) || [...before].some((l) => l.startsWith(`:${c} `)))) return;
  if ([...now].some((l) => l.startsWith('-A CNI-HOSTPORT-DNAT '))) return; // in use by someone else
  for (const rule of [...now].filter((l) => shared.some((c) => l.includes(`-j ${c}`)) && !shared.some((c) => l.startsWith(`-A ${c} `)))) {
    await ipt(splitRule(rule.replace(/^-A /, '-D ')));
  }
  for (const c of shared) {
    await ipt(['-F', c]);
    await ipt(['-X', c]);
  }
}

/** Splits an iptables-save rule into argv, honouring double quotes. */
function splitRule(rule: string): string[] {
  const out: string[] = [];
  for (const m of rule.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) out.push(m[1] !== undefined ? m[1].replace(/\\"/g, '"') : m[2]!);
  return out;
}

