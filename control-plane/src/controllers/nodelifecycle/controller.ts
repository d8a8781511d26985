/**
 * Node lifecycle controller: watches Leases in `kube-node-lease` and node heartbeats; a node not
 * heard from for the grace period (50 s) gets Ready=Unknown and the unreachable taints, its pods
 * are marked not ready, and NoExecute taints evict pods after their tolerationSeconds (300 s by
 * default). Rules are in ./health.ts; this file only watches, remembers and writes.
 *
 * Heartbeats are timed by when *we* saw them change (our clock), not by the timestamps the agent
 * wrote, so clock skew between machines cannot make a node look dead or alive.
 */
import { LEASES, NODES, PODS, rfc3339, type Node, type Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { NODE_MONITOR_GRACE_MS, planEvictions, readyCondition, reconcileTaints, unknownConditions } from './health.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const NODE_MONITOR_PERIOD_MS = 5_000;

interface Health {
  leaseRenew?: string;
  heartbeat?: string;
  /** Our clock when the lease or heartbeat last changed (or when we first saw the node). */
  observedAt: number;
}

export class NodeLifecycleController extends ControllerBase {
  readonly #nodes;
  readonly #leases;
  readonly #pods;
  readonly #health = new Map<string, Health>();
  readonly #graceMs: number;

  constructor(d: ControllerDeps) {
    super(d, { name: 'nodelifecycle', eventComponent: 'node-controller' });
    this.#graceMs = d.options.nodeMonitorGracePeriodMs ?? NODE_MONITOR_GRACE_MS;
    this.#nodes = this.informer(NODES);
    this.#leases = this.informer(LEASES, NODE_LEASE_NAMESPACE);
    this.#pods = this.informer(PODS);
    const onNode = (n: Node): void => {
      const name = n.metadata.name ?? '';
      const hb = readyCondition(n)?.lastHeartbeatTime;
      const h = this.#health.get(name);
      if (!h) this.#health.set(name, { heartbeat: hb, observedAt: d.clock.now() });
      else if (hb && hb !== h.heartbeat) {
        h.heartbeat = hb;
        h.observedAt = d.clock.now();
      }
      this.queue.add(name);
    };
    this.handle(this.#nodes, { onAdd: onNode, onUpdate: (_o, n) => onNode(n), onDelete: (n) => this.#health.delete(n.metadata.name ?? '') });
    const onLease = (l: { metadata: { name?: string }; spec?: { renewTime?: string } }): void => {
      const name = l.metadata.name ?? '';
      const h = this.#health.get(name) ?? { observedAt: d.clock.now() };
      if (l.spec?.renewTime && l.spec.renewTime !== h.leaseRenew) {
        h.leaseRenew = l.spec.renewTime;
        h.observedAt = d.clock.now();
      }
      this.#health.set(name, h);
      this.queue.add(name);
    };
    this.handle(this.#leases, { onAdd: onLease, onUpdate: (_o, l) => onLease(l) });
    // The monitor loop: look at every node each period (silence produces no events).
    this.every(d.options.nodeMonitorPeriodMs ?? NODE_MONITOR_PERIOD_MS, () => this.#nodes.list().map((n) => n.metadata.name ?? ''));
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let node = this.#nodes.get(name);
    if (!node) return;
    const now = this.clock.now();
    const nodes = this.client.resource(NODES);

    // 1. Health: silent past the grace period → every monitored condition Unknown.
    const h = this.#health.get(name);
    if (h && now - h.observedAt > this.#graceMs) {
      const conditions = unknownConditions(node, rfc3339(now));
      if (conditions) {
        this.log.info({ node: name, silentMs: now - h.observedAt }, 'Node stopped posting status, marking Unknown');
        try {
          // Conditional on what we judged, so a heartbeat that lands meanwhile wins.
          node = await nodes.patchStatus(name, { metadata: { resourceVersion: node.metadata.resourceVersion }, status: { conditions } }, { type: 'merge', signal });
        } catch (err) {
          if (hasCode(err, 'ERR_CONFLICT')) return { requeueAfterMs: 100 };
          throw err;
        }
        await this.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        await this.#markPodsNotReady(name, signal);
      }
    }

    // 2. Taints follow the Ready and pressure conditions.
    const taints = reconcileTaints(node, rfc3339(now));
    if (taints) {
      try {
        node = await nodes.patch(name, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints } }, { type: 'merge', signal });
      } catch (err) {
        if (hasCode(err, 'ERR_CONFLICT')) return { requeueAfterMs: 100 };
        throw err;
      }
    }

    // 3. NoExecute eviction of the node's pods.
    const pods = this.#pods.list().filter((p) => p.spec?.nodeName === name);
    const plan = planEvictions(node, pods, now);
    for (const pod of plan.evict) await this.#evict(pod, signal);
    if (plan.nextAt !== undefined) return { requeueAfterMs: Math.max(0, plan.nextAt - now) };
  }

  async #evict(pod: Pod, signal: AbortSignal): Promise<void> {
    try {
      await this.client.resource(PODS, pod.metadata.namespace).delete(pod.metadata.name ?? '', { preconditions: { uid: pod.metadata.uid }, signal });
      await this.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${pod.metadata.namespace}/${pod.metadata.name}`);
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
  }

  /** Upstream MarkPodsNotReady: services stop sending traffic to pods of an unreachable node. */
  async #markPodsNotReady(node: string, signal: AbortSignal): Promise<void> {
    const now = rfc3339(this.clock.now());
    for (const pod of this.#pods.list()) {
      if (pod.spec?.nodeName !== node) continue;
      const conds = pod.status?.conditions ?? [];
      const ready = conds.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const conditions = conds.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c));
      try {
        await this.client.resource(PODS, pod.metadata.namespace).patchStatus(pod.metadata.name ?? '', { status: { conditions } }, { type: 'merge', signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
  }
}
