/**
 * `nodelet doctor --leaks`: what the node holds that no pod owns any more.
 *
 *   sandboxes / containers   CRI objects whose io.kubernetes.pod.uid has no pod in the API
 *                            (only when an API client is given) or, for containers, no sandbox
 *   dead sandboxes           not ready and not the newest sandbox of their pod (kubelet's GC
 *                            removes them: kuberuntime_gc.go evictSandboxes)
 *   dead containers          created or exited containers beyond the newest dead one per pod and
 *                            container name (kubelet's maxPerPodContainer = 1)
 *   CNI cache entries        results/<net>-<id>-<if> whose container has no sandbox
 *   IP allocations           host-local <dataDir>/<net>/<ip> whose owner has no sandbox
 *   netns                    /var/run/netns/cni-* no sandbox points at
 *   veths                    host veths on the pod bridge that no cached attachment names
 *
 * Every finding is a `fail` line with the command that removes it. What could not be checked (the
 * API unreachable, a sandbox whose status fails) is a `warn` line saying so, never a pass or a
 * false leak.
 */
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describeError } from '@nodelet/base';
import type { CriClient } from '@nodelet/cri-client';
import { netnsPathFromSandboxInfo } from '@nodelet/cri-client';
import { ResultCache } from '@nodelet/cni';
import type { Check, CheckResult } from './check.js';

export interface LeakCheckOptions {
  cri: CriClient;
  cniCacheDir: string;
  /** host-local's data dir (default /var/lib/cni/networks). */
  ipamDataDir: string;
  /** Where the runtime pins network namespaces (default /var/run/netns). */
  netnsDir: string;
  /** The pod bridge whose veths to inspect. */
  bridge?: string;
  /**
   * UIDs of the pods the API server says run on this node (undefined: API not consulted). When
   * it throws, the orphan check reports that it could not check instead of passing.
   */
  apiPodUids?: (signal: AbortSignal) => Promise<Set<string>>;
}

async function safeReaddir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

function bridgeVeths(bridge: string): string[] {
  try {
    const out = execFileSync('ip', ['-j', 'link', 'show', 'master', bridge], { encoding: 'utf8' });
    return (JSON.parse(out) as Array<{ ifname: string }>).map((l) => l.ifname);
  } catch {
    return [];
  }
}

type Sandbox = Awaited<ReturnType<CriClient['runtime']['listPodSandbox']>>['items'][number];
type Container = Awaited<ReturnType<CriClient['runtime']['listContainers']>>['containers'][number];

const POD_UID = 'io.kubernetes.pod.uid';
const newestFirst = <T extends { createdAt: string | number | unknown }>(xs: T[]): T[] =>
  [...xs].sort((a, b) => {
    const x = BigInt(String(a.createdAt || 0));
    const y = BigInt(String(b.createdAt || 0));
    return x > y ? -1 : x < y ? 1 : 0;
  });

/**
 * What kubelet's garbage collector would remove from pods that still exist: sandboxes that are not
 * ready and not the pod's newest (a sandbox whose RunPodSandbox never returned has no creation
 * time, so it is the oldest), and dead containers beyond the newest per container name.
 */
function deadObjects(sandboxes: Sandbox[], containers: Container[], sandboxIds: ReadonlySet<string>, podUids: ReadonlySet<string> | undefined): CheckResult[] {
  const out: CheckResult[] = [];
  const byPod = new Map<string, Sandbox[]>();
  for (const s of sandboxes) {
    const uid = s.labels?.[POD_UID];
    if (!uid || (podUids && !podUids.has(uid))) continue; // whole pod gone: listed as leaks.sandbox
    byPod.set(uid, [...(byPod.get(uid) ?? []), s]);
  }
  for (const list of byPod.values()) {
    for (const s of newestFirst(list).slice(1)) {
      if (s.state === 'SANDBOX_READY') continue;
      // containerd reports Go's zero time (year 1, overflowing to a negative UnixNano) when RunPodSandbox never returned
      const created = BigInt(String(s.createdAt || 0)) <= 0n ? 'never finished starting' : `created ${new Date(Number(BigInt(String(s.createdAt)) / 1_000_000n)).toISOString()}`;
      out.push({ id: 'leaks.dead-sandbox', level: 'fail', message: `sandbox "${s.id.slice(0, 13)}" of pod ${s.metadata?.namespace}/${s.metadata?.name} is not ready and not the pod's newest (${created})`, fix: `nodelet cri stopp ${s.id} && nodelet cri rmp ${s.id}` });
    }
  }
  const dead = new Map<string, Container[]>();
  for (const c of containers) {
    const uid = c.labels?.[POD_UID];
    if (c.state === 'CONTAINER_RUNNING' || !uid || !sandboxIds.has(c.podSandboxId) || (podUids && !podUids.has(uid))) continue;
    const key = `${uid}/${c.metadata?.name}`;
    dead.set(key, [...(dead.get(key) ?? []), c]);
  }
  for (const list of dead.values()) {
    for (const c of newestFirst(list).slice(1)) {
      out.push({ id: 'leaks.dead-container', level: 'fail', message: `container "${c.id.slice(0, 13)}" (${c.metadata?.name}, ${String(c.state).replace('CONTAINER_', '').toLowerCase()}) of pod ${c.labels?.['io.kubernetes.pod.namespace']}/${c.labels?.['io.kubernetes.pod.name']} is a dead container beyond the newest one`, fix: `nodelet cri rm ${c.id}` });
    }
  }
  return out;
}

export function leakCheck(o: LeakCheckOptions): Check {
  return {
    id: 'leaks',
    title: 'leaked resources',
    async run(signal): Promise<CheckResult[]> {
      const out: CheckResult[] = [];
      const sandboxes = (await o.cri.runtime.listPodSandbox({}, { signal })).items ?? [];
      const sandboxIds = new Set(sandboxes.map((s) => s.id));
      let podUids: Set<string> | undefined;
      if (o.apiPodUids) {
        try {
          podUids = await o.apiPodUids(signal);
        } catch (err) {
          out.push({ id: 'leaks.sandbox', level: 'warn', message: `sandboxes against the API: could not check: ${describeError(err)}`, fix: 'check --kubeconfig and that the API server is reachable, then rerun' });
        }
      }
      const netnsInUse = new Set<string>();
      // A sandbox whose status cannot be read may own any namespace: none can be called leaked.
      let netnsUnknown = false;
      for (const s of sandboxes) {
        const uid = s.labels?.['io.kubernetes.pod.uid'];
        if (podUids && uid && !podUids.has(uid)) {
          out.push({ id: 'leaks.sandbox', level: 'fail', message: `sandbox "${s.id.slice(0, 13)}" of pod ${s.metadata?.namespace}/${s.metadata?.name} (uid ${uid}) has no pod in the API`, fix: `nodelet cri stopp ${s.id} && nodelet cri rmp ${s.id}` });
        }
        try {
          const st = await o.cri.runtime.podSandboxStatus({ podSandboxId: s.id, verbose: true }, { signal });
          const ns = netnsPathFromSandboxInfo(st.info ?? {});
          if (ns) netnsInUse.add(ns);
        } catch (err) {
          if (signal.aborted) throw err;
          netnsUnknown = true;
          out.push({ id: 'leaks.netns', level: 'warn', message: `network namespaces: could not check: the status of sandbox "${s.id.slice(0, 13)}" failed: ${describeError(err)}`, fix: `nodelet cri inspectp ${s.id}, then rerun` });
        }
      }
      const containers = (await o.cri.runtime.listContainers({}, { signal })).containers ?? [];
      for (const c of containers) {
        if (!sandboxIds.has(c.podSandboxId)) {
          out.push({ id: 'leaks.container', level: 'fail', message: `container "${c.id.slice(0, 13)}" (${c.metadata?.name}) belongs to no sandbox`, fix: `nodelet cri rm -f ${c.id}` });
        }
      }
      out.push(...deadObjects(sandboxes, containers, sandboxIds, podUids));
      const cache = new ResultCache(o.cniCacheDir);
      const cached = await cache.list();
      const vethsInUse = new Set<string>();
      for (const a of cached) {
        const ifaces = ((a.result?.interfaces ?? []) as Array<{ name?: string; sandbox?: string }>).filter((i) => !i.sandbox && i.name);
        if (sandboxIds.has(a.containerID)) {
          for (const i of ifaces) vethsInUse.add(i.name!);
          continue;
        }
        out.push({ id: 'leaks.cni-cache', level: 'fail', message: `CNI cache entry ${a.file} for container "${a.containerID.slice(0, 13)}" that has no sandbox`, fix: `nodelet cni gc (or nodelet cni del ${a.networkName} ${a.netns ?? '""'} with CNI_CONTAINERID=${a.containerID})` });
      }
      for (const net of await safeReaddir(o.ipamDataDir)) {
        for (const f of await safeReaddir(join(o.ipamDataDir, net))) {
          if (!/^\d+\.\d+\.\d+\.\d+$|:/.test(f)) continue;
          const owner = (await readFile(join(o.ipamDataDir, net, f), 'utf8').catch(() => '')).split(/\s+/)[0] ?? '';
          if (!sandboxIds.has(owner)) {
            out.push({ id: 'leaks.ip', level: 'fail', message: `IP ${f} of network "${net}" is allocated to "${owner.slice(0, 13)}", which has no sandbox`, fix: `rm ${join(o.ipamDataDir, net, f)} (after checking no pod uses ${f})` });
          }
        }
      }
      for (const n of netnsUnknown ? [] : await safeReaddir(o.netnsDir)) {
        if (!n.startsWith('cni-')) continue;
        const p = join(o.netnsDir, n);
        if (!netnsInUse.has(p)) {
          out.push({ id: 'leaks.netns', level: 'fail', message: `network namespace ${p} is used by no sandbox`, fix: `ip netns delete ${n}` });
        }
      }
      if (o.bridge && existsSync(`/sys/class/net/${o.bridge}`)) {
        for (const v of bridgeVeths(o.bridge)) {
          if (!vethsInUse.has(v)) out.push({ id: 'leaks.veth', level: 'fail', message: `veth ${v} on ${o.bridge} belongs to no attachment`, fix: `ip link delete ${v}` });
        }
      }
      if (out.length === 0) out.push({ id: 'leaks', level: 'pass', message: `no leaks (${sandboxes.length} sandboxes, ${containers.length} containers, ${cached.length} CNI attachments)` });
      return out;
    },
  };
}
