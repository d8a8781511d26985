/**
 * The cgroup filesystem as every part needs it: where the hierarchies are mounted (read from
 * `/proc/self/mountinfo`, not assumed), a cgroup path in each of them, and the removal of a cgroup
 * subtree. The agent's pod cgroups and stats (agent/src/cm, agent/src/stats) and the lab's teardown
 * use these; what is read inside a cgroup stays with the agent.
 */
import { readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface CgroupMounts {
  /** v1 controller → { mountpoint, root of the mount }. */
  v1: Map<string, { mount: string; root: string }>;
  /** The unified (v2) hierarchy, when mounted. */
  v2?: { mount: string; root: string };
}

/** The cgroup mounts of `/proc/self/mountinfo` (pure). */
export function parseMountinfo(text: string): CgroupMounts {
  const out: CgroupMounts = { v1: new Map() };
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(' ');
    const [fstype, , superOptions = ''] = line.slice(dash + 3).split(' ');
    const root = unescapeMount(pre[3] ?? '/');
    const mount = unescapeMount(pre[4] ?? '');
    if (fstype === 'cgroup2') out.v2 ??= { mount, root };
    else if (fstype === 'cgroup') {
      for (const opt of superOptions.split(',')) if (!out.v1.has(opt)) out.v1.set(opt, { mount, root });
    }
  }
  return out;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** `path` as seen inside a mount whose root is `root` (a cgroup namespace hides what is above it). */
export function relativeToMountRoot(root: string, path: string): string {
  if (root === '/' || !path.startsWith(root)) return path;
  return path.slice(root.length) || '/';
}

/** The directory of cgroup `path` in every mounted hierarchy, each once (runc makes a container's in all of them). */
export function cgroupPathInEveryHierarchy(mounts: CgroupMounts, path: string): string[] {
  const byMount = new Map<string, { mount: string; root: string }>();
  for (const m of mounts.v1.values()) byMount.set(m.mount, m);
  if (mounts.v2) byMount.set(mounts.v2.mount, mounts.v2);
  return [...byMount.values()].map((m) => join(m.mount, relativeToMountRoot(m.root, path)));
}

/**
 * rmdir of a cgroup directory and of its child cgroups, deepest first: a cgroup's files go with
 * its directory, and rmdir refuses one that still holds processes (EBUSY, thrown). A directory
 * already gone is no error. `remove` stands in for rmdir in tests.
 */
export async function removeCgroupTree(dir: string, remove: (dir: string) => Promise<void> = rmdir): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) if (e.isDirectory()) await removeCgroupTree(join(dir, e.name), remove);
  try {
    await remove(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** The processes in cgroup directory `dir` and in its child cgroups (`cgroup.procs` of each); none when it is gone. */
export async function cgroupTreePids(dir: string): Promise<number[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: number[] = [];
  if (entries.some((e) => e.isFile() && e.name === 'cgroup.procs')) {
    const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return ''; // removed meanwhile
      throw err;
    });
    for (const line of text.split('\n')) if (/^\d+$/.test(line)) out.push(Number(line));
  }
  for (const e of entries) if (e.isDirectory()) out.push(...(await cgroupTreePids(join(dir, e.name))));
  return out;
}
