/**
 * `statsp` on a runtime that cannot answer ListPodSandboxStats. containerd 1.6 refuses it for
 * any sandbox without a cgroup of its own ("cgroupPath is empty"), which is every sandbox the
 * nodelet agent creates (it sets no cgroup parent), so crictl's statsp fails there. nodelet's
 * falls back to what the agent's /stats/summary sums too: each ready sandbox's running
 * containers (CPU time and working set), without the few hundred KiB of the pause process.
 */
import type { ContainerStats__Output, CriClient, PodSandboxStats__Output } from '@nodelet/cri-client';

type Sandbox = Awaited<ReturnType<CriClient['runtime']['listPodSandbox']>>['items'][number];

const add = (a: bigint, v: { value: string } | null | undefined): bigint => a + BigInt(v?.value || '0');

/** Pod stats made from container stats (pure): one entry per sandbox in `sandboxes`. */
export function podStatsFromContainers(sandboxes: readonly Sandbox[], stats: readonly ContainerStats__Output[], sandboxOf: ReadonlyMap<string, string>): PodSandboxStats__Output[] {
  return sandboxes.map((sb) => {
    const mine = stats.filter((s) => sandboxOf.get(s.attributes?.id ?? '') === sb.id);
    let cpu = 0n;
    let ws = 0n;
    let ts = 0n;
    for (const s of mine) {
      cpu = add(cpu, s.cpu?.usageCoreNanoSeconds);
      ws = add(ws, s.memory?.workingSetBytes);
      const t = BigInt(s.cpu?.timestamp || '0');
      if (t > ts) ts = t;
    }
    const timestamp = ts.toString();
    return {
      attributes: { id: sb.id, metadata: sb.metadata, labels: sb.labels, annotations: sb.annotations },
      linux: {
        cpu: { timestamp, usageCoreNanoSeconds: { value: cpu.toString() }, usageNanoCores: null },
        memory: { timestamp, workingSetBytes: { value: ws.toString() }, availableBytes: null, usageBytes: null, rssBytes: null, pageFaults: null, majorPageFaults: null },
        network: null,
        process: null,
        containers: mine,
      },
      windows: null,
    };
  });
}

/** ListPodSandboxStats, or the container-based fallback (`onFallback` is told why, once per call). */
export async function listPodStats(
  runtime: CriClient['runtime'],
  filter: { id: string; labelSelector: Record<string, string> },
  onFallback: (err: unknown) => void,
): Promise<PodSandboxStats__Output[]> {
  try {
    return (await runtime.listPodSandboxStats({ filter })).stats;
  } catch (err) {
    onFallback(err);
  }
  const [sandboxes, containers, stats] = await Promise.all([
    runtime.listPodSandbox({ filter: { id: filter.id, labelSelector: filter.labelSelector, state: { state: 'SANDBOX_READY' } } }),
    runtime.listContainers({ filter: { state: { state: 'CONTAINER_RUNNING' } } }),
    runtime.listContainerStats({}),
  ]);
  const sandboxOf = new Map(containers.containers.map((c) => [c.id, c.podSandboxId]));
  return podStatsFromContainers(sandboxes.items, stats.stats, sandboxOf);
}
