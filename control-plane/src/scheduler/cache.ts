/**
 * The scheduler's view of the cluster: nodes, and per node the pods bound to it plus the pods
 * this scheduler assumed there while their binding is in flight (so the next decision already
 * counts them). NodeInfos are rebuilt lazily, only for nodes that changed.
 */
import type { Node, Pod } from '@nodelet/api';
import { isTerminal, newNodeInfo, type NodeInfo } from './node-info.js';

export class SchedulerCache {
  readonly #nodes = new Map<string, Node>();
  /** node name → pod key → pod */
  readonly #podsByNode = new Map<string, Map<string, Pod>>();
  /** pod key → node name, for bound and assumed pods */
  readonly #nodeOfPod = new Map<string, string>();
  readonly #assumed = new Set<string>();
  readonly #infos = new Map<string, NodeInfo>();

  get nodeCount(): number {
    return this.#nodes.size;
  }

  isAssumed(key: string): boolean {
    return this.#assumed.has(key);
  }

  setNode(node: Node): void {
    const name = node.metadata.name ?? '';
    this.#nodes.set(name, node);
    this.#infos.delete(name);
  }

  deleteNode(name: string): void {
    this.#nodes.delete(name);
    this.#infos.delete(name);
  }

  /** A pod from the informer: bound and running pods count, terminal ones free their node. */
  setPod(key: string, pod: Pod): void {
    const node = pod.spec?.nodeName;
    if (!node || isTerminal(pod)) {
      // Unbound pods hold nothing, unless we assumed them (the informer has not caught up yet).
      if (!this.#assumed.has(key) || isTerminal(pod)) this.#remove(key);
      return;
    }
    this.#assumed.delete(key);
    this.#put(key, node, pod);
  }

  deletePod(key: string): void {
    this.#remove(key);
  }

  /** Counts `pod` on `node` until the informer reports it bound (or {@link forget} is called). */
  assume(key: string, pod: Pod, node: string): void {
    this.#assumed.add(key);
    this.#put(key, node, { ...pod, spec: { ...pod.spec!, nodeName: node } });
  }

  /** The binding failed: the pod no longer holds resources on the node. */
  forget(key: string): void {
    if (!this.#assumed.delete(key)) return;
    this.#remove(key);
  }

  /** NodeInfos of every node (cached; rebuilt only for nodes that changed). */
  nodeInfos(): NodeInfo[] {
    const out: NodeInfo[] = [];
    for (const [name, node] of this.#nodes) {
      let info = this.#infos.get(name);
      if (!info) {
        info = newNodeInfo(node, [...(this.#podsByNode.get(name)?.values() ?? [])]);
        this.#infos.set(name, info);
      }
      out.push(info);
    }
    return out;
  }

  #put(key: string, node: string, pod: Pod): void {
    const prev = this.#nodeOfPod.get(key);
    if (prev && prev !== node) this.#remove(key);
    let m = this.#podsByNode.get(node);
    if (!m) this.#podsByNode.set(node, (m = new Map()));
    m.set(key, pod);
    this.#nodeOfPod.set(key, node);
    this.#infos.delete(node);
  }

  #remove(key: string): void {
    this.#assumed.delete(key);
    const node = this.#nodeOfPod.get(key);
    if (node === undefined) return;
    this.#nodeOfPod.delete(key);
    this.#podsByNode.get(node)?.delete(key);
    this.#infos.delete(node);
  }
}
