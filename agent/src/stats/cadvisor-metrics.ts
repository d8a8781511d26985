/**
 * `GET /metrics/cadvisor`: the per-container series kubelet's embedded cadvisor exposes and
 * kube-prometheus' dashboards and recording rules read, rendered from the same Summary as
 * /stats/summary and /metrics/resource (so `kubectl top` and these agree). Labels are cadvisor's,
 * sorted by name: `container`, `id` (the cgroup, or the container ID where the agent does not know
 * the cgroup), `image`, `name` (the runtime's container ID), `namespace`, `pod`. Pod-level series
 * have `container=""`, as cadvisor's pod cgroup rows do, and so do the network counters, which are
 * the pod's (its sandbox's namespace), per interface. Every sample carries its measurement time in ms.
 *
 *   container_cpu_usage_seconds_total{cpu="total"}      counter
 *   container_memory_working_set_bytes, container_memory_rss, container_memory_usage_bytes   gauge
 *   container_network_receive_bytes_total, container_network_transmit_bytes_total{interface}  counter
 *
 * Not written: container_fs_* (the Summary has no device per container filesystem) and the
 * per-CPU, blkio and throttling families.
 */
import { goFloat, RESOURCE_METRICS_CONTENT_TYPE } from './resource-metrics.js';
import type { PodStats, Summary } from './types.js';
import type { ObservedPod } from '../kubecontainer/observed.js';

export const CADVISOR_METRICS_CONTENT_TYPE = RESOURCE_METRICS_CONTENT_TYPE;

/** What the runtime says about one pod's containers and sandbox (the PLEG's cache). */
export interface RuntimeIds {
  container(podUid: string, name: string): { id: string; image: string } | undefined;
  sandbox(podUid: string): { id: string } | undefined;
  /** The pod's cgroup path when the agent made one (cm/pod-cgroups.ts). */
  podCgroup?(podUid: string): string | undefined;
}

type Labels = Array<[string, string]>;

const escape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

class Families {
  readonly #f = new Map<string, { help: string; type: string; lines: Array<{ key: string; line: string }> }>();

  add(name: string, type: 'counter' | 'gauge', help: string, labels: Labels, value: number | undefined, time: string): void {
    if (value === undefined) return;
    let f = this.#f.get(name);
    if (!f) this.#f.set(name, (f = { help, type, lines: [] }));
    const sorted = [...labels].sort(([a], [b]) => (a < b ? -1 : 1));
    const l = sorted.map(([k, v]) => `${k}="${escape(v)}"`).join(',');
    f.lines.push({ key: sorted.map(([, v]) => v).join('\u0000'), line: `${name}{${l}} ${goFloat(value)} ${Date.parse(time)}` });
  }

  render(): string {
    const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    return [...this.#f.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, f]) => `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n${f.lines.sort(byKey).map((x) => x.line).join('\n')}\n`)
      .join('');
  }
}

function podRows(p: PodStats, ids: RuntimeIds, out: Families): void {
  const uid = p.podRef.uid;
  const podCgroup = ids.podCgroup?.(uid);
  const base: Labels = [['namespace', p.podRef.namespace], ['pod', p.podRef.name]];
  const memory = (labels: Labels, m: PodStats['memory']): void => {
    if (!m) return;
    out.add('container_memory_working_set_bytes', 'gauge', 'Current working set in bytes.', labels, m.workingSetBytes, m.time);
    out.add('container_memory_rss', 'gauge', 'Size of RSS in bytes.', labels, m.rssBytes, m.time);
    out.add('container_memory_usage_bytes', 'gauge', 'Current memory usage in bytes, including all memory regardless of when it was accessed', labels, m.usageBytes, m.time);
  };
  const cpu = (labels: Labels, c: PodStats['cpu']): void => {
    if (c?.usageCoreNanoSeconds === undefined) return;
    out.add('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed in seconds.', [...labels, ['cpu', 'total']], c.usageCoreNanoSeconds / 1e9, c.time);
  };
  for (const c of p.containers) {
    const rt = ids.container(uid, c.name);
    if (!rt) continue; // gone from the runtime since the stats round
    const labels: Labels = [...base, ['container', c.name], ['id', podCgroup ? `${podCgroup}/${rt.id}` : rt.id], ['image', rt.image], ['name', rt.id]];
    cpu(labels, c.cpu);
    memory(labels, c.memory);
  }
  const podLabels: Labels = [...base, ['container', ''], ['id', podCgroup ?? ''], ['image', ''], ['name', '']];
  cpu(podLabels, p.cpu);
  memory(podLabels, p.memory);
  const net = p.network;
  const sandbox = ids.sandbox(uid);
  if (net && sandbox) {
    const ifaces = net.interfaces ?? (net.name ? [{ name: net.name, rxBytes: net.rxBytes, txBytes: net.txBytes }] : []);
    for (const i of ifaces) {
      // The pod's network namespace is the sandbox's: one row per interface at pod level.
      const labels: Labels = [...base, ['container', ''], ['id', podCgroup ?? sandbox.id], ['image', ''], ['interface', i.name], ['name', sandbox.id]];
      out.add('container_network_receive_bytes_total', 'counter', 'Cumulative count of bytes received', labels, i.rxBytes, net.time);
      out.add('container_network_transmit_bytes_total', 'counter', 'Cumulative count of bytes transmitted', labels, i.txBytes, net.time);
    }
  }
}

/** The exposition of `summary` (empty when there is none yet: cadvisor writes no series before its first housekeeping). */
export function renderCadvisorMetrics(summary: Summary | undefined, ids: RuntimeIds): string {
  const out = new Families();
  for (const p of summary?.pods ?? []) podRows(p, ids, out);
  return out.render();
}

/** {@link RuntimeIds} from the PLEG's cache (newest container of each name, newest sandbox). */
export function runtimeIdsFrom(pods: () => ReadonlyMap<string, ObservedPod>, podCgroup?: (uid: string) => string | undefined): RuntimeIds {
  return {
    container: (uid, name) => {
      const c = pods().get(uid)?.containers.find((x) => x.name === name);
      return c ? { id: c.id, image: c.image } : undefined;
    },
    sandbox: (uid) => {
      const s = pods().get(uid)?.sandboxes[0];
      return s ? { id: s.id } : undefined;
    },
    ...(podCgroup ? { podCgroup } : {}),
  };
}
