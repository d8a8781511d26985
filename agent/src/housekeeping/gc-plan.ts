/**
 * What runtime GC removes, decided from the PLEG's view of the runtime (kubelet
 * kuberuntime_gc.go, plus one rule of nodelet's). Pure: no I/O, no clock; table-tested in
 * gc-plan.test.ts and carried out by runtime-gc.ts.
 *
 * Containers. Evictable: not running, created at least `minAgeMs` ago (a container whose
 * creation time is unknown counts as old). Grouped per (pod, container):
 *
 *   1 pod gone (no source wants it, no worker has it)     remove every evictable one
 *   2 never ran and superseded                            remove it (nodelet: see below)
 *   3 beyond maxPerPodContainer in its group              remove the oldest (newest = highest
 *                                                         attempt, then newest creation)
 *   4 beyond maxContainers on the node                    first cut every group to
 *                                                         max(1, maxContainers / groups), then
 *                                                         remove the oldest anywhere
 *
 * Rule 2 is nodelet's: a container that never started (Created, or exited without a start time,
 * as StartError) holds no logs and no exit of the program, and nothing will ever start it once a
 * newer container of the same name exists, or once its sandbox is dead (not ready and not the
 * pod's newest). kubelet would keep it as the one dead container of its group, and with it its
 * sandbox; it is what an agent killed between CreateContainer and StartContainer leaves.
 *
 * Sandboxes. Active: ready, or holding a container that stays. Per pod, newest = highest
 * attempt, then newest creation (containerd reports Go's zero time, negative, for a sandbox
 * whose RunPodSandbox never returned: such a one is the oldest of its attempt):
 *
 *   pod gone       remove every inactive sandbox
 *   otherwise      remove every inactive sandbox but the newest
 *
 * Only what carries `io.kubernetes.pod.uid` is ever named (the PLEG lists only what nodelet
 * labelled; a pod without a UID is skipped).
 */
import type { ObservedContainer, ObservedPod, ObservedSandbox } from '../kubecontainer/observed.js';

/** kubelet's container GC policy (`--maximum-dead-containers-per-container` and friends). */
export interface GcPolicy {
  /** Containers younger than this are kept. kubelet default 0. */
  minAgeMs: number;
  /** Dead containers kept per (pod, container); < 0 = no limit. kubelet default 1. */
  maxPerPodContainer: number;
  /** Dead containers kept on the node; < 0 = no limit. kubelet default -1. */
  maxContainers: number;
}

export const DEFAULT_GC_POLICY: GcPolicy = { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 };

/** Why something is removed: logged as `reason`, and the event's message says it in words. */
export type GcReason = 'PodDeleted' | 'NeverStarted' | 'MaxPerPodContainer' | 'MaxContainers' | 'DeadSandbox';

export interface ContainerRemoval {
  pod: ObservedPod;
  container: ObservedContainer;
  reason: GcReason;
}

export interface SandboxRemoval {
  pod: ObservedPod;
  sandbox: ObservedSandbox;
  reason: GcReason;
}

export interface GcPlan {
  containers: ContainerRemoval[];
  /** Only to be removed once every container removal of the same pod has succeeded. */
  sandboxes: SandboxRemoval[];
}

export interface PlanInput {
  pods: Iterable<ObservedPod>;
  policy: GcPolicy;
  now: number;
  /** The pod is deleted: no source wants it and no worker has it (false until every source was seen). */
  podGone(uid: string): boolean;
}

/** Newest first: highest attempt, then newest creation (kubelet's byAttempt). */
function byAttemptThenCreation(a: { attempt: number; createdAt: number }, b: { attempt: number; createdAt: number }): number {
  return b.attempt - a.attempt || b.createdAt - a.createdAt;
}

const containerOrder = (a: ObservedContainer, b: ObservedContainer): number =>
  byAttemptThenCreation({ attempt: a.restartCount, createdAt: a.createdAt }, { attempt: b.restartCount, createdAt: b.createdAt });

/** Never started: no logs, no exit of the program (Created; StartError leaves no start time). */
function neverRan(c: ObservedContainer): boolean {
  return c.state === 'created' || (c.state === 'exited' && !c.startedAt);
}

/** The pod's sandboxes, newest first. */
export function sandboxesNewestFirst(p: ObservedPod): ObservedSandbox[] {
  return [...p.sandboxes].sort(byAttemptThenCreation);
}

export function planGc(input: PlanInput): GcPlan {
  const { policy, now } = input;
  const plan: GcPlan = { containers: [], sandboxes: [] };
  const cutoff = now - policy.minAgeMs;
  // Groups that survive the per-pod rules, for the node-wide limit.
  const groups: Array<{ pod: ObservedPod; list: ObservedContainer[] }> = [];
  const pods = [...input.pods];

  for (const pod of pods) {
    if (!pod.uid) continue;
    const gone = input.podGone(pod.uid);
    const sandboxes = sandboxesNewestFirst(pod);
    const dead = new Set(sandboxes.filter((s, i) => !s.ready && i > 0).map((s) => s.id));
    const byName = new Map<string, ObservedContainer[]>();
    for (const c of [...pod.containers].sort(containerOrder)) {
      const key = `${c.type}/${c.name}`;
      let list = byName.get(key);
      if (!list) byName.set(key, (list = []));
      list.push(c);
    }
    for (const all of byName.values()) {
      // `all` is newest first; anything newer than a container supersedes it.
      const evictable = all.filter((c) => c.state !== 'running' && c.createdAt <= cutoff);
      if (gone) {
        for (const c of evictable) plan.containers.push({ pod, container: c, reason: 'PodDeleted' });
        continue;
      }
      const keep: ObservedContainer[] = [];
      for (const c of evictable) {
        const superseded = all.indexOf(c) > 0 || dead.has(c.sandboxId) || !pod.sandboxes.some((s) => s.id === c.sandboxId);
        if (neverRan(c) && superseded) plan.containers.push({ pod, container: c, reason: 'NeverStarted' });
        else keep.push(c);
      }
      if (policy.maxPerPodContainer >= 0) {
        for (const c of keep.splice(policy.maxPerPodContainer)) plan.containers.push({ pod, container: c, reason: 'MaxPerPodContainer' });
      }
      if (keep.length > 0) groups.push({ pod, list: keep });
    }
  }

  if (policy.maxContainers >= 0) {
    let total = groups.reduce((n, g) => n + g.list.length, 0);
    if (total > policy.maxContainers) {
      const perGroup = Math.max(1, Math.floor(policy.maxContainers / groups.length));
      for (const g of groups) {
        for (const c of g.list.splice(perGroup)) {
          plan.containers.push({ pod: g.pod, container: c, reason: 'MaxContainers' });
          total--;
        }
      }
      const oldestFirst = groups.flatMap((g) => g.list.map((c) => ({ pod: g.pod, c }))).sort((a, b) => a.c.createdAt - b.c.createdAt);
      for (const { pod, c } of oldestFirst.slice(0, Math.max(0, total - policy.maxContainers))) plan.containers.push({ pod, container: c, reason: 'MaxContainers' });
    }
  }

  const removed = new Set(plan.containers.map((r) => r.container.id));
  for (const pod of pods) {
    if (!pod.uid) continue;
    const gone = input.podGone(pod.uid);
    const holding = new Set(pod.containers.filter((c) => !removed.has(c.id)).map((c) => c.sandboxId));
    sandboxesNewestFirst(pod).forEach((s, i) => {
      if (s.ready || holding.has(s.id)) return;
      if (gone) plan.sandboxes.push({ pod, sandbox: s, reason: 'PodDeleted' });
      else if (i > 0) plan.sandboxes.push({ pod, sandbox: s, reason: 'DeadSandbox' });
    });
  }
  return plan;
}

/** The reason in words, for the event on the pod. */
export function describeReason(reason: GcReason): string {
  switch (reason) {
    case 'PodDeleted':
      return 'its pod no longer exists';
    case 'NeverStarted':
      return 'it never started and was replaced';
    case 'MaxPerPodContainer':
      return 'older than the newest dead container of its name';
    case 'MaxContainers':
      return 'the node holds more dead containers than allowed';
    case 'DeadSandbox':
      return 'not ready and not the newest sandbox of its pod';
  }
}
