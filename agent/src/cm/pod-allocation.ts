/**
 * In-place pod resize on the node (KEP 1287; kubelet's allocation manager and
 * handlePodResourcesResize / canResizePod, as in Kubernetes 1.33). Three views of each app
 * container's resources:
 *
 *   desired        spec.containers[*].resources, which pods/resize may change
 *   allocated      what the agent admitted: the desired resources of the pod's first sync, then of
 *                  each resize that fits; every container the agent creates gets these, and the
 *                  node's accounting (admission, resize checks) counts them
 *   acknowledged   what the runtime was last given for a container (CreateContainer or
 *                  UpdateContainerResources); unknown after an agent restart, which makes the next
 *                  sync send UpdateContainerResources once (it is idempotent)
 *
 * A resize (desired ≠ allocated) is Infeasible when the pod's cpu or memory requests exceed the
 * node's allocatable, Deferred when they do not fit beside the other pods' allocations (looked at
 * again on every sync of the pod and when another pod stops), else allocated at once. The pod
 * reports it as kubelet 1.33 does: condition PodResizePending (reason Deferred/Infeasible) while
 * desired ≠ allocated, PodResizeInProgress while allocated ≠ acknowledged for a running container,
 * and containerStatuses[*].allocatedResources / .resources. The allocations live in memory (kubelet
 * checkpoints them to disk): after an agent restart a pod starts from the resources its status
 * reported, so a resize that was pending is judged again rather than applied unchecked.
 */
import type { Container, ContainerStatus, Pod, PodCondition, PodStatus, ResourceRequirements } from '@nodelet/api/agent';
import { capacityUnits, insufficientResources, requestUnits } from '../admission/resource-fit.js';
import { parseQuantity } from '../util/quantity.js';

/** Why a resize is not allocated yet (condition PodResizePending). */
export interface PendingResize {
  reason: 'Deferred' | 'Infeasible';
  message: string;
}

export interface PodAllocationOptions {
  /** The node's status.allocatable, undefined until the node is registered (then every resize fits). */
  allocatable(): Readonly<Record<string, string | number>> | undefined;
  /** The pods the node runs (being synced), as the API has them. */
  activePods(): readonly Pod[];
  /** Syncs a pod again soon (a Deferred resize may fit once another pod stopped). */
  wake(uid: string): void;
  now(): number;
}

const RESIZABLE = ['cpu', 'memory'] as const;
type Resources = ResourceRequirements | undefined;

/** The cpu/memory requests and limits of a container's resources, as compared and reported. */
function cpuMemory(r: Resources): ResourceRequirements {
  const pick = (list: Record<string, string> | undefined): Record<string, string> | undefined => {
    if (!list) return undefined;
    const out: Record<string, string> = {};
    for (const k of RESIZABLE) if (list[k] !== undefined) out[k] = String(list[k]);
    return Object.keys(out).length ? out : undefined;
  };
  const out: ResourceRequirements = {};
  const limits = pick(r?.limits);
  const requests = pick(r?.requests);
  if (limits) out.limits = limits;
  if (requests) out.requests = requests;
  return out;
}

function sameAmount(x: string | undefined, y: string | undefined): boolean {
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  try {
    return parseQuantity(x) === parseQuantity(y);
  } catch {
    return false;
  }
}

/** The cpu/memory resources whose request or limit differs between `a` and `b` ([] when equal as amounts). */
export function changedResources(a: Resources, b: Resources): string[] {
  return RESIZABLE.filter((k) => !sameAmount(a?.requests?.[k], b?.requests?.[k]) || !sameAmount(a?.limits?.[k], b?.limits?.[k]));
}

export class PodAllocation {
  readonly #o: PodAllocationOptions;
  /** uid → container name → allocated resources. */
  readonly #allocated = new Map<string, Map<string, Resources>>();
  /** uid → container name → [container ID, acknowledged resources]. */
  readonly #acked = new Map<string, Map<string, { id: string; resources: Resources }>>();
  readonly #pending = new Map<string, PendingResize>();
  /** uid → why the last actuation failed (PodResizeInProgress reason Error). */
  readonly #errors = new Map<string, string>();

  constructor(o: PodAllocationOptions) {
    this.#o = o;
  }

  /** The pod with its allocated resources in the spec (the desired ones before its first sync). */
  allocatedPod(pod: Pod): Pod {
    const got = this.#allocated.get(pod.metadata.uid!);
    if (!got || !pod.spec) return pod;
    const containers = pod.spec.containers.map((c) => (got.has(c.name) ? withResources(c, got.get(c.name)) : c));
    return { ...pod, spec: { ...pod.spec, containers } };
  }

  /**
   * The pod to run: allocates its resources on its first sync, and a resize when it fits the node
   * (handlePodResourcesResize); otherwise records why it is pending and keeps the allocation.
   */
  allocate(pod: Pod): Pod {
    const uid = pod.metadata.uid!;
    const containers = pod.spec?.containers ?? [];
    const got = this.#allocated.get(uid);
    if (!got) {
      // New to this agent: a pod another agent run already reported resources for keeps those
      // (a resize pending then stays pending); any other gets its spec.
      this.#allocated.set(uid, new Map(containers.map((c) => [c.name, reported(pod, c) ?? c.resources])));
      return this.allocate(pod);
    }
    const resizing = containers.some((c) => got.has(c.name) && changedResources(c.resources, got.get(c.name)).length > 0);
    if (!resizing) {
      this.#pending.delete(uid);
      return this.allocatedPod(pod);
    }
    const pending = this.#canResize(pod);
    if (pending) {
      this.#pending.set(uid, pending);
      return this.allocatedPod(pod);
    }
    this.#pending.delete(uid);
    for (const c of containers) if (got.has(c.name)) got.set(c.name, c.resources);
    return pod;
  }

  /** kubelet canResizePod: Infeasible beyond allocatable, Deferred beside the other pods' allocations. */
  #canResize(pod: Pod): PendingResize | undefined {
    const alloc = this.#o.allocatable();
    if (!alloc) return undefined;
    for (const r of RESIZABLE) {
      const capacity = capacityUnits(alloc, r);
      if (capacity === undefined) continue;
      const requested = requestUnits(pod, r);
      if (requested > capacity) return { reason: 'Infeasible', message: `Node didn't have enough capacity: ${r}, requested: ${requested}, capacity: ${capacity}` };
    }
    const uid = pod.metadata.uid;
    const others = this.#o.activePods().filter((p) => p.metadata.uid !== uid).map((p) => this.allocatedPod(p));
    const short = insufficientResources(pod, others, alloc).filter((s) => (RESIZABLE as readonly string[]).includes(s.resource));
    const first = short[0];
    if (!first) return undefined;
    return { reason: 'Deferred', message: `Node didn't have enough resource: ${first.resource}, requested: ${first.requested}, used: ${first.used}, capacity: ${first.capacity}` };
  }

  /** The cpu/memory resources whose request or limit differs (for the runtime's resize step). */
  changedResources(a: Resources, b: Resources): string[] {
    return changedResources(a, b);
  }

  /** The resources the runtime was last given for this container ID, if the agent knows them. */
  acknowledged(uid: string, name: string, id: string): { known: boolean; resources: Resources } {
    const a = this.#acked.get(uid)?.get(name);
    return a && a.id === id ? { known: true, resources: a.resources } : { known: false, resources: undefined };
  }

  /** The runtime accepted `resources` for a container (created with them, or updated). */
  acknowledge(uid: string, name: string, id: string, resources: Resources): void {
    let m = this.#acked.get(uid);
    if (!m) this.#acked.set(uid, (m = new Map()));
    m.set(name, { id, resources });
    this.#errors.delete(uid);
  }

  /** An actuation failed (UpdateContainerResources or the pod cgroup): PodResizeInProgress says so. */
  failed(uid: string, message: string): void {
    this.#errors.set(uid, message);
  }

  /** A pod stopped: its resources are free, so Deferred resizes are looked at again. */
  podStopped(uid: string): void {
    for (const other of this.#pending.keys()) if (other !== uid && this.#pending.get(other)?.reason === 'Deferred') this.#o.wake(other);
  }

  /** The pod is gone. */
  forget(uid: string): void {
    this.#allocated.delete(uid);
    this.#acked.delete(uid);
    this.#pending.delete(uid);
    this.#errors.delete(uid);
    this.podStopped(uid);
  }

  /** Whether a Deferred resize waits (the lifecycle syncs the pod again later). */
  deferred(uid: string): boolean {
    return this.#pending.get(uid)?.reason === 'Deferred';
  }

  /**
   * Adds to a computed status what kubelet reports of resizes: each app container's allocated
   * requests and its actual resources (the acknowledged ones while it runs, else the allocated),
   * and the PodResizePending / PodResizeInProgress conditions.
   */
  report(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid!;
    const got = this.#allocated.get(uid);
    if (!got) return;
    let inProgress = false;
    status.containerStatuses = status.containerStatuses?.map((cs): ContainerStatus => {
      if (!got.has(cs.name)) return cs;
      const allocated = cpuMemory(got.get(cs.name));
      const out: ContainerStatus = { ...cs };
      const requests = got.get(cs.name)?.requests;
      if (requests && Object.keys(requests).length) out.allocatedResources = { ...requests };
      let actual = allocated;
      if (cs.state?.running && cs.containerID) {
        const ack = this.acknowledged(uid, cs.name, cs.containerID.replace(/^[a-z0-9]+:\/\//, ''));
        if (!ack.known || changedResources(ack.resources, got.get(cs.name)).length > 0) inProgress = true;
        if (ack.known) actual = cpuMemory(ack.resources);
      }
      if (actual.limits || actual.requests) out.resources = actual;
      return out;
    });
    const now = new Date(this.#o.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const keep = (status.conditions ?? []).filter((c) => c.type !== 'PodResizePending' && c.type !== 'PodResizeInProgress');
    const prev = (type: string): PodCondition | undefined => pod.status?.conditions?.find((c) => c.type === type);
    const cond = (type: string, reason: string, message: string): PodCondition => {
      const p = prev(type);
      const same = p && p.status === 'True' && (p.reason ?? '') === reason;
      return { type, status: 'True', lastProbeTime: now, lastTransitionTime: same && p.lastTransitionTime ? p.lastTransitionTime : now, ...(reason ? { reason } : {}), ...(message ? { message } : {}) } as PodCondition;
    };
    const pending = this.#pending.get(uid);
    const error = this.#errors.get(uid);
    if (pending) keep.push(cond('PodResizePending', pending.reason, pending.message));
    if (inProgress || error) keep.push(cond('PodResizeInProgress', error ? 'Error' : '', error ?? ''));
    status.conditions = keep;
  }
}

/**
 * The resources the pod's status says the container ran with (an earlier agent's report), as a
 * full allocation: cpu/memory from the status, anything else from the spec; undefined without one.
 */
function reported(pod: Pod, c: Container): Resources {
  const st = pod.status?.containerStatuses?.find((s) => s.name === c.name)?.resources;
  if (!st || (!st.requests && !st.limits)) return undefined;
  const merge = (spec: Record<string, string> | undefined, status: Record<string, string> | undefined): Record<string, string> | undefined => {
    const out: Record<string, string> = { ...(spec ?? {}) };
    for (const k of RESIZABLE) {
      delete out[k];
      if (status?.[k] !== undefined) out[k] = status[k];
    }
    return Object.keys(out).length ? out : undefined;
  };
  const requests = merge(c.resources?.requests, st.requests);
  const limits = merge(c.resources?.limits, st.limits);
  return { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) };
}

function withResources(c: Container, r: Resources): Container {
  const out: Container = { ...c };
  if (r === undefined) delete out.resources;
  else out.resources = r;
  return out;
}
