/**
 * NodeInfo: one node plus the pods bound (or assumed bound) to it, with their summed requests and
 * used host ports, precomputed once per change so each filter is O(1) per node.
 */
import type { Node, Pod } from '@nodelet/api';
import { addResources, nodeAllocatable, podRequests, zeroResources, type Allocatable, type Resources } from './resources.js';

export interface HostPort {
  hostIP: string;
  protocol: string;
  port: number;
}

export interface NodeInfo {
  readonly node: Node;
  readonly name: string;
  readonly allocatable: Allocatable;
  readonly pods: readonly Pod[];
  /** Sum of the pods' requests (what NodeResourcesFit compares with allocatable). */
  readonly requested: Resources;
  /** Same with the scoring defaults for missing requests (what LeastAllocated scores). */
  readonly nonZeroRequested: Resources;
  readonly usedPorts: readonly HostPort[];
}

/** Host ports a pod asks for (containers only, as upstream's NodePorts plugin). */
export function podHostPorts(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ hostIP: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

/** Builds a NodeInfo; `pods` are the non-terminal pods whose spec.nodeName is this node. */
export function newNodeInfo(node: Node, pods: readonly Pod[]): NodeInfo {
  let requested = zeroResources();
  let nonZeroRequested = zeroResources();
  const usedPorts: HostPort[] = [];
  for (const p of pods) {
    requested = addResources(requested, podRequests(p));
    nonZeroRequested = addResources(nonZeroRequested, podRequests(p, { nonZero: true }));
    usedPorts.push(...podHostPorts(p));
  }
  return {
    node,
    name: node.metadata.name ?? '',
    allocatable: nodeAllocatable(node),
    pods,
    requested,
    nonZeroRequested,
    usedPorts,
  };
}

/** Terminal pods hold no resources; the scheduler's cache ignores them as upstream does. */
export function isTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}
