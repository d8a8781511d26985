/**
 * Node lifecycle controller: watches Leases in `kube-node-lease` and node heartbeats; a node not
 * heard from for the grace period (50 s) gets Ready=Unknown and the unreachable taints, its pods
 * are marked not ready, and NoExecute taints evict pods after their tolerationSeconds (300 s by
 * default). Rules are in ./health.ts; this file only watches, remembers and writes.
 *
 * Heartbeats are timed by when *we* saw them change (our clock), not by the timestamps the agent
 * wrote, so clock skew between machines cannot make a node look dead or alive.
 */
import { EventRecorder, LEASES, NODES, PODS, rfc3339, type ApiClient, type Node, type Pod } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type ReconcileResult, type SharedInformers } from '../runtime.js';
import { NODE_MONITOR_GRACE_MS, planEvictions, readyCondition, reconcileTaints, unknownConditions } from './health.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const NODE_MONITOR_PERIOD_MS = 5_000;

export interface NodeLifecycleDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
  options: { nodeMonitorGracePeriodMs?: number; nodeMonitorPeriodMs?: number };
}

interface Health {
  leaseRenew?: string;
  heartbeat?: string;
  /** Our clock when the lease or heartbeat last changed (or when we first saw the node). */
  observedAt: number;
}

export class NodeLifecycleController implements Controller {
  readonly name = 'nodelifecycle';
  readonly queue;
  readonly workers = 2;
  readonly #d: NodeLifecycleDeps;
  readonly #nodes;
  readonly #leases;
  readonly #pods;
  readonly #health = new Map<string, Health>();
  readonly #events: EventRecorder;
  readonly #graceMs: number;
  readonly #periodMs: number;

  constructor(d: NodeLifecycleDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#graceMs = d.options.nodeMonitorGracePeriodMs ?? NODE_MONITOR_GRACE_MS;
    this.#periodMs = d.options.nodeMonitorPeriodMs ?? NODE_MONITOR_PERIOD_MS;
    this.#events = new EventRecorder({ client: d.client, component: 'node-controller', clock: d.clock, logger: d.logger });
    this.#nodes = d.informers.for(NODES);
    this.#leases = d.informers.for(LEASES, NODE_LEASE_NAMESPACE);
    this.#pods = d.informers.for(PODS);
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
    this.#nodes.on({ onAdd: onNode, onUpdate: (_o, n) => onNode(n), onDelete: (n) => this.#health.delete(n.metadata.name ?? '') });
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
    this.#leases.on({ onAdd: onLease, onUpdate: (_o, l) => onLease(l) });
  }

  start(signal: AbortSignal): void {
    // The monitor loop: look at every node each period (silence produces no events).
    const tick = (): void => {
      if (signal.aborted) return;
      for (const n of this.#nodes.list()) this.queue.add(n.metadata.name ?? '');
      cancel = this.#d.clock.setTimer(this.#periodMs, tick);
    };
    let cancel = this.#d.clock.setTimer(this.#periodMs, tick);
    signal.addEventListener('abort', () => cancel(), { once: true });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let node = this.#nodes.get(name);
    if (!node) return;
    const now = this.#d.clock.now();
    const nodes = this.#d.client.resource(NODES);

    // 1. Health: silent past the grace period → every monitored condition Unknown.
    const h = this.#health.get(name);
    if (h && now - h.observedAt > this.#graceMs) {
      const conditions = unknownConditions(node, rfc3339(now));
      if (conditions) {
        this.#d.logger.info({ node: name, silentMs: now - h.observedAt }, 'Node stopped posting status, marking Unknown');
        try {
          // Conditional on what we judged, so a heartbeat that lands meanwhile wins.
          node = await nodes.patchStatus(name, { metadata: { resourceVersion: node.metadata.resourceVersion }, status: { conditions } }, { type: 'merge', signal });
        } catch (err) {
          if (hasCode(err, 'ERR_CONFLICT')) return { requeueAfterMs: 100 };
          throw err;
        }
        await this.#events.record(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        await this.#markPodsNotReady(name, signal);
      }
    }

    // 2. Taints follow the Ready condition.
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
      await this.#d.client.resource(PODS, pod.metadata.namespace).delete(pod.metadata.name ?? '', { preconditions: { uid: pod.metadata.uid }, signal });
      await this.#events.record(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${pod.metadata.namespace}/${pod.metadata.name}`);
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
  }

  /** Upstream MarkPodsNotReady: services stop sending traffic to pods of an unreachable node. */
  async #markPodsNotReady(node: string, signal: AbortSignal): Promise<void> {
    const now = rfc3339(this.#d.clock.now());
    for (const pod of this.#pods.list()) {
      if (pod.spec?.nodeName !== node) continue;
      const conds = pod.status?.conditions ?? [];
      const ready = conds.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const conditions = conds.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c));
      try {
        await this.#d.client.resource(PODS, pod.metadata.namespace).patchStatus(pod.metadata.name ?? '', { status: { conditions } }, { type: 'merge', signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
  }
}
