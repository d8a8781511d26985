/**
 * NodeInfo: one node plus the pods bound (or assumed bound) to it, kept up to date incrementally:
 * adding or removing a pod adds or subtracts its precomputed requests, host ports and owner, so
 * every filter and score reads a sum instead of walking the node's pods (upstream
 * `framework.NodeInfo`). The scheduler cache owns the live ones; `generation` counts changes.
 */
import type { Node, Pod } from '@nodelet/api';
import { newPodInfo, type HostPort, type PodInfo } from './pod-info.js';
import { nodeAllocatable, zeroResources, type Allocatable, type Resources } from './resources.js';

export { podHostPorts, type HostPort } from './pod-info.js';

const ANY_IP = '0.0.0.0';

/**
 * Host ports in use on a node, by `protocol/port` then host IP (with a count, so two pods
 * holding the same port — possible while one is only assumed — release it one at a time).
 */
export class HostPortSet {
  readonly #byPort = new Map<string, Map<string, number>>();

  add(p: HostPort): void {
    const k = `${p.protocol}/${p.port}`;
    let ips = this.#byPort.get(k);
    if (!ips) this.#byPort.set(k, (ips = new Map()));
    ips.set(p.hostIP, (ips.get(p.hostIP) ?? 0) + 1);
  }

  remove(p: HostPort): void {
    const k = `${p.protocol}/${p.port}`;
    const ips = this.#byPort.get(k);
    const n = ips?.get(p.hostIP);
    if (!ips || n === undefined) return;
    if (n > 1) ips.set(p.hostIP, n - 1);
    else {
      ips.delete(p.hostIP);
      if (ips.size === 0) this.#byPort.delete(k);
    }
  }

  /** Upstream `HostPortInfo.CheckConflict`: 0.0.0.0 overlaps every address. */
  conflicts(want: HostPort): boolean {
    const ips = this.#byPort.get(`${want.protocol}/${want.port}`);
    if (!ips) return false;
    if (want.hostIP === ANY_IP) return true;
    return ips.has(want.hostIP) || ips.has(ANY_IP);
  }

  get size(): number {
    return this.#byPort.size;
  }
}

export class NodeInfo {
  readonly name: string;
  #node: Node;
  #allocatable: Allocatable;
  readonly #pods = new Map<string, PodInfo>();
  /** Sum of the pods' requests (what NodeResourcesFit compares with allocatable). */
  readonly requested: Resources = zeroResources();
  /** Same with the scoring defaults for missing requests (what LeastAllocated scores). */
  readonly nonZeroRequested: Resources = zeroResources();
  readonly usedPorts = new HostPortSet();
  /** Pods per `namespace/controller uid`, for owner spreading. */
  readonly #owners = new Map<string, number>();
  /** Bumped on every change, so callers can tell a NodeInfo changed since they last looked. */
  generation = 0;
  #imageSizes: Map<string, number> | undefined;

  constructor(node: Node) {
    this.name = node.metadata.name ?? '';
    this.#node = node;
    this.#allocatable = nodeAllocatable(node);
  }

  get node(): Node {
    return this.#node;
  }

  get allocatable(): Readonly<Allocatable> {
    return this.#allocatable;
  }

  get podCount(): number {
    return this.#pods.size;
  }

  pods(): IterableIterator<PodInfo> {
    return this.#pods.values();
  }

  hasPod(key: string): boolean {
    return this.#pods.has(key);
  }

  /** Pods on this node with the given `namespace/controller uid`. */
  ownerCount(ownerKey: string): number {
    return this.#owners.get(ownerKey) ?? 0;
  }

  /** Image name → size from `status.images` (every name of an image), built once per node version. */
  get imageSizes(): ReadonlyMap<string, number> {
    if (!this.#imageSizes) {
      this.#imageSizes = new Map();
      for (const img of this.#node.status?.images ?? []) for (const n of img.names ?? []) this.#imageSizes.set(n, img.sizeBytes ?? 0);
    }
    return this.#imageSizes;
  }

  /** A new version of the same node (labels, taints, allocatable…); the pods stay. */
  setNode(node: Node): void {
    this.#node = node;
    this.#imageSizes = undefined;
    this.#allocatable = nodeAllocatable(node);
    this.generation++;
  }

  /** Adds `p`, replacing an earlier version of the same pod. */
  addPod(p: PodInfo): void {
    this.removePod(p.key);
    this.#pods.set(p.key, p);
    add(this.requested, p.requests, 1);
    add(this.nonZeroRequested, p.nonZeroRequests, 1);
    for (const hp of p.hostPorts) this.usedPorts.add(hp);
    if (p.ownerKey !== undefined) this.#owners.set(p.ownerKey, (this.#owners.get(p.ownerKey) ?? 0) + 1);
    this.generation++;
  }

  /** Removes the pod with `key`; false when it was not here. */
  removePod(key: string): boolean {
    const p = this.#pods.get(key);
    if (!p) return false;
    this.#pods.delete(key);
    add(this.requested, p.requests, -1);
    add(this.nonZeroRequested, p.nonZeroRequests, -1);
    for (const hp of p.hostPorts) this.usedPorts.remove(hp);
    if (p.ownerKey !== undefined) {
      const n = (this.#owners.get(p.ownerKey) ?? 0) - 1;
      if (n > 0) this.#owners.set(p.ownerKey, n);
      else this.#owners.delete(p.ownerKey);
    }
    this.generation++;
    return true;
  }
}

function add(into: Resources, r: Readonly<Resources>, sign: 1 | -1): void {
  into.milliCPU += sign * r.milliCPU;
  into.memory += sign * r.memory;
  into.ephemeralStorage += sign * r.ephemeralStorage;
}

/** A standalone NodeInfo over `pods` (tests, and the preemption dry run). */
export function newNodeInfo(node: Node, pods: readonly (Pod | PodInfo)[]): NodeInfo {
  const info = new NodeInfo(node);
  for (const p of pods) info.addPod('nonZeroRequests' in p ? p : newPodInfo(p));
  return info;
}

/** Terminal pods hold no resources; the scheduler's cache ignores them as upstream does. */
export function isTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}
