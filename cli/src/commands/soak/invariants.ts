/**
 * The oracles: pure functions from what the node looks like (./observe.ts) to findings, one
 * invariant name each (docs/reliability.md lists them). A finding's `key` names the object, so
 * the same leak seen twice is the same finding (see {@link Persistence}).
 */
import type { Observation, PodView } from './observe.js';
import { RESTARTS_BY_DESIGN } from './workloads.js';

export const INVARIANTS = [
  'workload-converged', 'one-ready-sandbox', 'containers', 'stuck-terminating', 'orphans', 'host-leaks', 'dead-sandboxes', 'dead-containers',
  'doctor-leaks', 'no-unprovoked-restarts', 'restart-while-api-away', 'status-after-api-back', 'ledger', 'node-ready-after-runtime', 'notready-while-runtime-down',
  'components-alive', 'agent-resources',
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

export interface Finding {
  invariant: InvariantName;
  key: string;
  message: string;
}

const f = (invariant: InvariantName, key: string, message: string): Finding => ({ invariant, key, message });

/** doctor's lines for what the agent's garbage collector removes (a stray veth sits in a dead sandbox's netns). */
export const DOCTOR_GC_IDS = ['leaks.dead-sandbox', 'leaks.dead-container', 'leaks.veth'] as const;

/**
 * A leftover only the agent's garbage collector removes (issue 15 item 1: dead sandboxes, dead and
 * never-started containers beyond the newest), as opposed to a leak nothing would ever clean up.
 * Still a broken invariant; the report lists these apart so a run says which kind it found.
 */
export function awaitsGc(x: Finding): boolean {
  if (x.invariant === 'dead-sandboxes' || x.invariant === 'dead-containers') return true;
  return x.invariant === 'doctor-leaks' && DOCTOR_GC_IDS.some((id) => x.message.startsWith(`${id}:`));
}
const short = (id: string): string => id.slice(0, 13);
const active = (p: PodView): boolean => !p.deleting && p.phase !== 'Succeeded' && p.phase !== 'Failed';

/**
 * Every pod bound to the node (not terminating, not finished) has exactly one ready sandbox and
 * the containers its kind should have; see ./workloads.ts for what each kind looks like converged.
 */
export function podFindings(o: Observation): Finding[] {
  const out: Finding[] = [];
  for (const p of o.pods.filter(active)) {
    const pod = `${p.namespace}/${p.name}`;
    const ready = o.sandboxes.filter((s) => s.uid === p.uid && s.ready);
    if (ready.length !== 1) {
      out.push(f('one-ready-sandbox', p.uid, `pod ${pod} has ${ready.length} ready sandboxes (${ready.map((s) => short(s.id)).join(', ') || 'none'})`));
      continue;
    }
    const sb = ready[0]!;
    const inSandbox = o.containers.filter((c) => c.sandboxId === sb.id);
    const running = (name: string) => inSandbox.filter((c) => c.name === name && c.state === 'running');
    switch (p.kind) {
      case undefined:
        break; // not the soak's: its own expectations are unknown; the sandbox rule above holds for all
      case 'badimage':
        if (inSandbox.length) out.push(f('containers', p.uid, `pod ${pod} (image missing) has ${inSandbox.length} containers`));
        if (!['ErrImagePull', 'ImagePullBackOff'].includes(p.containers[0]?.waiting ?? '')) out.push(f('containers', `${p.uid}/reason`, `pod ${pod} (image missing) waits with reason ${p.containers[0]?.waiting ?? '(none)'}, not ErrImagePull/ImagePullBackOff`));
        break;
      case 'crashy':
        if (running('main').length > 1) out.push(f('containers', p.uid, `pod ${pod} runs ${running('main').length} "main" containers`));
        break;
      default: {
        if (!p.ready) out.push(f('containers', `${p.uid}/ready`, `pod ${pod} is not Ready`));
        for (const c of p.containers) {
          const r = running(c.name);
          if (r.length !== 1) out.push(f('containers', `${p.uid}/${c.name}`, `pod ${pod} container "${c.name}" has ${r.length} running instances in sandbox ${short(sb.id)}`));
          else if (c.containerID && c.containerID !== r[0]!.id) out.push(f('containers', `${p.uid}/${c.name}/id`, `pod ${pod} container "${c.name}": API says ${short(c.containerID)}, runtime runs ${short(r[0]!.id)}`));
        }
        for (const i of p.initContainers) if (!i.succeeded) out.push(f('containers', `${p.uid}/${i.name}`, `pod ${pod} init container "${i.name}" has not exited 0`));
      }
    }
  }
  return out;
}

/**
 * The soak's deployments have what they were scaled to (ready, for the kinds that become Ready)
 * and every pod of the soak is bound to the node: the controllers and the scheduler caught up.
 */
export function workloadFindings(o: Observation): Finding[] {
  const out: Finding[] = [];
  for (const d of o.workload.deployments) {
    const needReady = d.kind !== 'crashy';
    if (!d.observed || d.replicas !== d.want || d.updated !== d.want || (needReady && d.ready !== d.want)) {
      out.push(f('workload-converged', `deploy/${d.name}`, `deployment ${d.name}: want ${d.want}, has ${d.replicas} (updated ${d.updated}, ready ${d.ready}${d.observed ? '' : ', generation not observed yet'})`));
    }
  }
  for (const p of o.workload.unscheduled) out.push(f('workload-converged', `pod/${p}`, `pod ${p} is not bound to a node`));
  return out;
}

/** Deleted pods go away; nothing in the runtime belongs to a pod the API does not have. */
export function orphanFindings(o: Observation): Finding[] {
  const out: Finding[] = [];
  const uids = new Set(o.pods.map((p) => p.uid));
  for (const p of o.pods) if (p.deleting) out.push(f('stuck-terminating', p.uid, `pod ${p.namespace}/${p.name} was deleted but is still there`));
  for (const s of o.sandboxes) if (!uids.has(s.uid)) out.push(f('orphans', s.id, `sandbox ${short(s.id)} (${s.ready ? 'ready' : 'not ready'}) of ${s.pod} (uid ${s.uid}) has no pod in the API`));
  const sandboxIds = new Set(o.sandboxes.map((s) => s.id));
  for (const c of o.containers) if (!sandboxIds.has(c.sandboxId)) out.push(f('orphans', c.id, `container ${short(c.id)} "${c.name}" belongs to no sandbox`));
  return out;
}

/**
 * kubelet's garbage collection rules (kuberuntime_gc.go): of a pod's sandboxes only the newest may
 * be not ready; of a pod's dead containers (exited or never started) one per container name stays.
 */
export function gcFindings(o: Observation): Finding[] {
  const out: Finding[] = [];
  const uids = new Set(o.pods.map((p) => p.uid));
  const newestFirst = <T extends { createdAt: bigint }>(xs: T[]): T[] => [...xs].sort((a, b) => (a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : 0));
  for (const uid of uids) {
    const sbs = newestFirst(o.sandboxes.filter((s) => s.uid === uid));
    for (const s of sbs.slice(1)) if (!s.ready) out.push(f('dead-sandboxes', s.id, `sandbox ${short(s.id)} of ${s.pod} is not ready and not the pod's newest (created ${s.createdAt <= 0n ? 'never: RunPodSandbox did not return' : new Date(Number(s.createdAt / 1_000_000n)).toISOString()})`));
    const dead = o.containers.filter((c) => c.uid === uid && c.state !== 'running');
    for (const name of new Set(dead.map((c) => c.name))) {
      for (const c of newestFirst(dead.filter((d) => d.name === name)).slice(1)) {
        out.push(f('dead-containers', c.id, `container ${short(c.id)} "${name}" (${c.state}) of pod uid ${uid} is a dead container beyond the newest one`));
      }
    }
  }
  return out;
}

export interface HostContext {
  /** Every sandbox and container ID the soak saw in this runtime (the cgroup parent is shared with other runtimes). */
  everSeen: ReadonlySet<string>;
}

/** Nothing on the host outlives its pod: netns, veth, IP file, CNI cache, mounts, pod/log dirs, cgroups. */
export function hostLeakFindings(o: Observation, ctx: HostContext): Finding[] {
  const out: Finding[] = [];
  const h = o.host;
  const sandboxIds = new Set(o.sandboxes.map((s) => s.id));
  const ids = new Set([...sandboxIds, ...o.containers.map((c) => c.id)]);
  const uids = new Set([...o.pods.map((p) => p.uid), ...o.sandboxes.map((s) => s.uid), ...o.containers.map((c) => c.uid)]);
  const netnsInUse = new Set(o.sandboxes.map((s) => s.netns).filter(Boolean));
  for (const n of h.netns) if (!netnsInUse.has(n)) out.push(f('host-leaks', `netns:${n}`, `network namespace ${n} is used by no sandbox`));
  const vethsInUse = new Set(h.cniCache.filter((e) => sandboxIds.has(e.containerID)).flatMap((e) => e.veths));
  for (const v of h.veths) {
    if (vethsInUse.has(v)) continue;
    const owner = h.vethOwners[v];
    // A veth in the netns of a sandbox the runtime still has (its ADD result was lost with a killed
    // agent) goes with that sandbox: not ready, it is a dead sandbox (gcFindings); ready, it lacks its cache entry.
    if (owner && o.sandboxes.some((s) => s.id === owner && !s.ready)) continue;
    out.push(f('host-leaks', `veth:${v}`, owner ? `veth ${v} of ready sandbox ${short(owner)} has no CNI cache entry` : `veth ${v} on the pod bridge belongs to no sandbox`));
  }
  for (const ip of h.ips) if (!sandboxIds.has(ip.owner)) out.push(f('host-leaks', `ip:${ip.file}`, `host-local IP ${ip.file} is held by ${short(ip.owner)}, which has no sandbox`));
  for (const e of h.cniCache) if (!sandboxIds.has(e.containerID)) out.push(f('host-leaks', `cni:${e.file}`, `CNI cache entry ${e.file} has no sandbox`));
  for (const m of h.mounts) {
    const pod = /\/pods\/([0-9a-f-]{36})\//.exec(m)?.[1];
    const id = /\/(?:sandboxes|k8s\.io)\/([0-9a-f]{64})\//.exec(m)?.[1];
    if (pod && !uids.has(pod)) out.push(f('host-leaks', `mount:${m}`, `mount ${m} belongs to pod uid ${pod}, which is gone`));
    else if (id && !ids.has(id)) out.push(f('host-leaks', `mount:${m}`, `mount ${m} belongs to ${short(id)}, which the runtime no longer has`));
  }
  for (const d of h.podDirs) if (!uids.has(d)) out.push(f('host-leaks', `poddir:${d}`, `pod directory pods/${d} has no pod`));
  for (const d of h.logDirs) if (!uids.has(d.uid)) out.push(f('host-leaks', `logdir:${d.dir}`, `log directory ${d.dir} has no pod`));
  for (const c of h.cgroups) if (ctx.everSeen.has(c) && !ids.has(c)) out.push(f('host-leaks', `cgroup:${c}`, `cgroup k8s.io/${short(c)} outlived its container`));
  // With pod cgroups, a container's cgroup lies in its pod's, which the agent removes whole (what a
  // killed agent's cancelled task creation left in it goes too): the pod cgroup must go with the pod.
  for (const u of h.podCgroups) if (!uids.has(u)) out.push(f('host-leaks', `podcgroup:${u}`, `pod cgroup kubepods/…/pod${u} outlived its pod`));
  return out;
}

/** Running containers of Ready pods that restart only if something touched them. */
export type RestartSnapshot = Map<string, { pod: string; containers: Map<string, { id: string; restarts: number }> }>;

export function snapshotRestarts(o: Observation): RestartSnapshot {
  const snap: RestartSnapshot = new Map();
  for (const p of o.pods) {
    if (!active(p) || !p.ready || !p.kind || RESTARTS_BY_DESIGN.has(p.kind)) continue;
    if (!p.containers.every((c) => c.running && c.containerID)) continue;
    snap.set(p.uid, { pod: `${p.namespace}/${p.name}`, containers: new Map(p.containers.map((c) => [c.name, { id: c.containerID!, restarts: c.restartCount }])) });
  }
  return snap;
}

/** Pods of `before` that still exist must run the same containers with the same restart counts. */
export function restartFindings(before: RestartSnapshot, o: Observation): Finding[] {
  const out: Finding[] = [];
  for (const p of o.pods) {
    const was = before.get(p.uid);
    if (!was || p.deleting) continue;
    for (const c of p.containers) {
      const w = was.containers.get(c.name);
      if (!w) continue;
      const runs = o.containers.some((x) => x.id === w.id && x.state === 'running');
      if (!runs || c.restartCount !== w.restarts || (c.containerID && c.containerID !== w.id)) {
        out.push(f('no-unprovoked-restarts', `${p.uid}/${c.name}`, `pod ${was.pod} container "${c.name}" was ${short(w.id)} (restarts ${w.restarts}), now ${c.containerID ? short(c.containerID) : '(none)'} (restarts ${c.restartCount}${runs ? '' : '; the old one no longer runs'})`));
      }
    }
  }
  return out;
}

/**
 * Findings that only count once they last: a garbage collector runs periodically, so a dead
 * container is a leak only when it is still there a GC period (plus slack) after it was first seen.
 */
export class Persistence {
  readonly #first = new Map<string, number>();
  constructor(private readonly minAgeMs: number) {}

  /** Records `findings` seen at `now`; returns those first seen at least minAgeMs ago. Forgets the rest. */
  update(findings: readonly Finding[], now: number): Finding[] {
    const keys = new Set(findings.map((x) => `${x.invariant}:${x.key}`));
    for (const k of [...this.#first.keys()]) if (!keys.has(k)) this.#first.delete(k);
    return findings.filter((x) => {
      const k = `${x.invariant}:${x.key}`;
      if (!this.#first.has(k)) this.#first.set(k, now);
      return now - this.#first.get(k)! >= this.minAgeMs;
    });
  }

  /** When the youngest pending finding becomes countable (undefined when none is pending). */
  pendingUntil(now: number): number | undefined {
    const due = [...this.#first.values()].map((t) => t + this.minAgeMs).filter((t) => t > now);
    return due.length ? Math.max(...due) : undefined;
  }
}
