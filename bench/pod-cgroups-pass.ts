/**
 * What the agent's pod-cgroup housekeeping pass costs in listing: `PodCgroups.podUIDs()`, run
 * every 2 s (housekeeping's pod-dirs job), reads `kubepods/{,burstable,besteffort}` in every
 * mounted cgroup hierarchy so that a pod cgroup a killed agent half-removed is still found
 * (agent/src/cm/pod-cgroups.ts). The baseline in the same run is the listing before that change:
 * the cpu hierarchy only.
 *
 *   sudo node --conditions=source --import tsx bench/pod-cgroups-pass.ts [--pods 30] [--n 2000] [--rounds 3]
 *
 * On the real cgroup tree, below a root of its own (removed at the end): `PodCgroups.init()`,
 * `--pods` Burstable/BestEffort pod cgroups made by `ensure()`, and in every hierarchy the pod's
 * directory with a container's beneath it, as runc leaves them. The figure is process CPU time
 * (user + system, libuv's threads included) per listing, after a warm-up, each round alternating
 * the two; and what one listing per 2 s is as a share of a core.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Pod } from '@nodelet/api/agent';
import { cgroupPathInEveryHierarchy, noopLogger, relativeToMountRoot, removeCgroupTree } from '@nodelet/base';
import { hostCgroupMounts, PodCgroups } from '../agent/src/cm/pod-cgroups.js';

const { values: args } = parseArgs({ options: { pods: { type: 'string', default: '30' }, n: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } } });
const PODS = Number(args.pods);
const N = Number(args.n);
const ROUNDS = Number(args.rounds);
const PASS_PERIOD_S = 2;

const mounts = await hostCgroupMounts();
const cpu = mounts.v1.get('cpu');
if (!cpu) throw new Error('this bench compares with the cpu-hierarchy-only listing of cgroup v1 (or hybrid); this host has no v1 cpu hierarchy');
const root = `/nodelet-bench-pod-cgroups-${process.pid}`;
const hierarchies = cgroupPathInEveryHierarchy(mounts, root);
try {
  const cg = new PodCgroups({ cgroupRoot: root, podPidsLimit: -1, log: noopLogger, mounts });
  await cg.init();
  for (let i = 0; i < PODS; i++) {
    const uid = `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const resources = i % 2 ? { requests: { cpu: '10m' } } : {};
    const pod: Pod = { metadata: { uid, name: `p${i}`, namespace: 'bench' }, spec: { containers: [{ name: 'c', image: 'i', resources }] } };
    const path = await cg.ensure(pod);
    for (const h of hierarchies) await mkdir(join(h, path.slice(root.length), 'c'.repeat(64)), { recursive: true });
  }
  const cpuKubepods = join(cpu.mount, relativeToMountRoot(cpu.root, root), 'kubepods');
  const cpuOnly = async (): Promise<number> => {
    let n = 0;
    for (const sub of ['', 'burstable', 'besteffort']) n += (await readdir(join(cpuKubepods, sub), { withFileTypes: true })).filter((e) => e.isDirectory() && e.name.startsWith('pod')).length;
    return n;
  };
  const every = async (): Promise<number> => (await cg.podUIDs()).size;
  const [a, b] = [await cpuOnly(), await every()];
  if (a !== PODS || b !== PODS) throw new Error(`expected ${PODS} pod cgroups, listed ${a} (cpu only) and ${b} (every hierarchy)`);

  const cpuPerCall = async (f: () => Promise<number>): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) await f();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / N;
  };
  const [l1, l5] = loadavg();
  console.log(`pod-cgroups-pass: ${PODS} pod cgroups, ${hierarchies.length} hierarchies, ${N} listings per figure; load average ${l1!.toFixed(2)} ${l5!.toFixed(2)}`);
  await cpuPerCall(cpuOnly);
  await cpuPerCall(every);
  for (let r = 1; r <= ROUNDS; r++) {
    const base = await cpuPerCall(cpuOnly);
    const now = await cpuPerCall(every);
    const share = (us: number): string => `${((us / 1e6 / PASS_PERIOD_S) * 100).toFixed(3)} % of a core`;
    console.log(`round ${r}: every hierarchy ${now.toFixed(0)} µs CPU per listing (${share(now)} at one per ${PASS_PERIOD_S} s) | baseline, cpu hierarchy only: ${base.toFixed(0)} µs (${share(base)}) | ×${(now / base).toFixed(1)}`);
  }
} finally {
  for (const dir of hierarchies) await removeCgroupTree(dir).catch((err: Error) => console.error(`left ${dir}: ${err.message}`));
}
