/**
 * The scheduler's view of the cluster, updated incrementally from informer events: one NodeInfo
 * per node (requested resources, pods, ports, owners) plus the pods this scheduler assumed onto a
 * node while their binding is in flight, so the next decision already counts them (upstream
 * `internal/cache`).
 *
 * It is also the scheduling snapshot. kube-scheduler copies changed NodeInfos into a separate
 * snapshot before each cycle because informer goroutines mutate the cache concurrently; here a
 * cycle (filter → score → assume) runs synchronously in one turn of the event loop, so nothing
 * can change the NodeInfos while it reads them, and the live ones are the snapshot.
 *
 * Assumed pods (upstream podState):
 *
 *   assume() ──▶ assumed ──informer reports it bound──▶ bound (counted until deleted/terminal)
 *                  │  │
 *                  │  └─ finishBinding(): deadline = now + TTL ──TTL passes, still unconfirmed──▶ expired (dropped)
 *                  └──── forget() (binding failed) ──▶ gone; the pod goes back to the queue
 *
 * A pod whose node was deleted keeps its NodeInfo out of the node list until the pod goes too,
 * so a node that comes back under the same name gets its pods back.
 */
import type { Node } from '@nodelet/api';
import { AgentError, type Clock } from '@nodelet/base';
import type { NodeSnapshot } from './algorithm.js';
import { MatchIndex, TermIndex } from './match-counts.js';
import { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';


interface PodState {
  info: PodInfo;
  node: string;
  assumed: boolean;
  /** Monotonic ms after which an assumed pod whose binding finished is dropped; undefined = not yet / never. */
  deadline?: number;
}

export interface SchedulerCacheOptions {
  clock: Clock;
  /**
   * How long an assumed pod whose binding call finished may wait for the informer to report it
   * bound before the cache drops it; 0 = never. Counted from finishBinding(), never mid-binding.
   */
  assumedPodTtlMs: number;
}

export class SchedulerCache implements NodeSnapshot {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  /** Every NodeInfo, including those of deleted nodes that still hold pods. */
  readonly #infos = new Map<string, NodeInfo>();
  /** NodeInfos of existing nodes, in a stable order (the round-robin start indexes into it). */
  readonly #list: NodeInfo[] = [];
  readonly #position = new Map<string, number>();
  readonly #pods = new Map<string, PodState>();
  /** Keys of the assumed pods (a subset of #pods), so expiry does not walk every pod. */
  readonly #assumed = new Set<string>();
  /** The counted pods' own affinity terms, grouped, for symmetry and scoring (upstream HavePodsWithAffinity). */
  readonly terms = new TermIndex();
  /** Image name → number of existing nodes that report it (ImageLocality's spread). */
  readonly #imageNodes = new Map<string, number>();
  /** Per-node counts of pods matching the selectors pods asked about (match-counts.ts). */
  readonly matches = new MatchIndex(() => this.#placedPods());

  constructor(o: SchedulerCacheOptions) {
    this.#clock = o.clock;
    this.#ttlMs = o.assumedPodTtlMs;
  }

  get nodeCount(): number {
    return this.#list.length;
  }

  get assumedCount(): number {
    return this.#assumed.size;
  }

  /** NodeInfos of the existing nodes. Live objects: read them within one synchronous cycle. */
  get list(): readonly NodeInfo[] {
    return this.#list;
  }

  get(name: string): NodeInfo | undefined {
    return this.#position.has(name) ? this.#infos.get(name) : undefined;
  }

  isAssumed(key: string): boolean {
    return this.#pods.get(key)?.assumed ?? false;
  }

  /** The node a bound or assumed pod counts on. */
  nodeOf(key: string): string | undefined {
    return this.#pods.get(key)?.node;
  }

  /** How many existing nodes report `image` (by any of its names) in `status.images`. */
  imageNodeCount(image: string): number {
    return this.#imageNodes.get(image) ?? 0;
  }

  addOrUpdateNode(node: Node): void {
    const name = node.metadata.name ?? '';
    const info = this.#infos.get(name);
    if (this.#position.has(name) && info) this.#countImages(info.node, -1);
    this.#countImages(node, 1);
    if (info) info.setNode(node);
    else this.#infos.set(name, new NodeInfo(node));
    if (!this.#position.has(name)) {
      this.#position.set(name, this.#list.length);
      this.#list.push(this.#infos.get(name)!);
    }
  }

  removeNode(name: string): void {
    const i = this.#position.get(name);
    if (i === undefined) return;
    // Swap-remove: O(1), and the order only decides where round-robin windows fall.
    const last = this.#list.pop()!;
    if (i < this.#list.length) {
      this.#list[i] = last;
      this.#position.set(last.name, i);
    }
    this.#position.delete(name);
    const info = this.#infos.get(name);
    if (info) this.#countImages(info.node, -1);
    if (info?.podCount === 0) this.#infos.delete(name);
  }

  #countImages(node: Node, d: 1 | -1): void {
    for (const img of node.status?.images ?? []) {
      for (const n of new Set(img.names ?? [])) {
        const c = (this.#imageNodes.get(n) ?? 0) + d;
        if (c > 0) this.#imageNodes.set(n, c);
        else this.#imageNodes.delete(n);
      }
    }
  }

  *#placedPods(): Generator<readonly [PodInfo, string]> {
    for (const st of this.#pods.values()) yield [st.info, st.node];
  }

  /** Every place a pod is counted goes through here and {@link #unplace}, so the indexes stay in step. */
  #place(info: PodInfo, node: string): void {
    this.#nodeInfoFor(node).addPod(info);
    this.matches.added(info, node);
    this.terms.added(info, node);
  }

  #unplace(st: PodState): void {
    this.#removeFromNode(st.node, st.info.key);
    this.matches.removed(st.info, st.node);
    this.terms.removed(st.info, st.node);
  }

  /**
   * A bound, non-terminal pod from the informer. Confirms it when it was assumed (on the node
   * it was bound to, which is the assumed one unless someone else bound it first).
   */
  addOrUpdatePod(info: PodInfo): void {
    const node = info.pod.spec?.nodeName;
    if (!node) throw new AgentError('ERR_INVALID_ARGUMENT', `pod "${info.key}" is not bound to a node`);
    const prev = this.#pods.get(info.key);
    this.#assumed.delete(info.key);
    if (prev) this.#unplace(prev);
    this.#pods.set(info.key, { info, node, assumed: false });
    this.#place(info, node);
  }

  /** The pod was deleted, finished, or unbound: it no longer holds anything. */
  removePod(key: string): void {
    const st = this.#pods.get(key);
    if (!st) return;
    this.#assumed.delete(key);
    this.#pods.delete(key);
    this.#unplace(st);
  }

  /**
   * Counts `info` on `node` until the informer reports it bound, or {@link forget} is called.
   * Throws ERR_CONFLICT when the pod is already in the cache (assumed or bound).
   */
  assume(info: PodInfo, node: string): void {
    if (this.#pods.has(info.key)) throw new AgentError('ERR_CONFLICT', `pod "${info.key}" is already in the scheduler cache`);
    const assumed: PodInfo = { ...info, pod: { ...info.pod, spec: { ...info.pod.spec!, nodeName: node } } };
    this.#pods.set(info.key, { info: assumed, node, assumed: true });
    this.#assumed.add(info.key);
    this.#place(assumed, node);
  }

  /** The binding call returned: from now on the assumed pod may expire (after the TTL). */
  finishBinding(key: string): void {
    const st = this.#pods.get(key);
    if (!st?.assumed || this.#ttlMs <= 0) return;
    st.deadline = this.#clock.monotonic() + this.#ttlMs;
  }

  /** The binding failed: the assumed pod no longer holds resources on its node. False when it was not assumed. */
  forget(key: string): boolean {
    const st = this.#pods.get(key);
    if (!st?.assumed) return false;
    this.removePod(key);
    return true;
  }

  /** Drops assumed pods whose deadline passed; returns their keys (upstream `cleanupAssumedPods`). */
  cleanupExpired(): string[] {
    const now = this.#clock.monotonic();
    const expired: string[] = [];
    for (const key of this.#assumed) {
      const deadline = this.#pods.get(key)?.deadline;
      if (deadline !== undefined && deadline <= now) expired.push(key);
    }
    for (const key of expired) this.removePod(key);
    return expired;
  }

  #nodeInfoFor(name: string): NodeInfo {
    let info = this.#infos.get(name);
    if (!info) {
      // A pod on a node we have not seen (yet): keep its NodeInfo out of the list until the Node arrives.
      info = new NodeInfo({ metadata: { name } });
      this.#infos.set(name, info);
    }
    return info;
  }

  #removeFromNode(name: string, key: string): void {
    const info = this.#infos.get(name);
    if (!info) return;
    info.removePod(key);
    if (info.podCount === 0 && !this.#position.has(name)) this.#infos.delete(name);
  }
}
