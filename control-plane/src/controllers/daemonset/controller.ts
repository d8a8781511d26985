/**
 * DaemonSet controller (upstream pkg/controller/daemon): one pod per eligible node, rolled by
 * RollingUpdate (maxUnavailable, maxSurge) or OnDelete, with its history in ControllerRevisions.
 *
 *   sync ─▶ current revision (`<ds>-<hash>`; a template seen before gets the next number: undo)
 *        ─▶ pods by target node ─▶ plan.ts: create / delete per node, then the rolling update
 *        ─▶ prune revisions beyond revisionHistoryLimit ─▶ status
 *
 * Pods are pinned with a `metadata.name` node affinity and bound by the scheduler. Acts as
 * kube-system/daemon-set-controller: pods create/delete/patch, controllerrevisions, and the
 * DaemonSet only through `daemonsets/status`.
 */
import { CONTROLLERREVISIONS, DAEMONSETS, labelSelectorFromObject, matchLabels, NODES, PODS, type ControllerRevision, type DaemonSet, type Node, type Pod } from '@nodelet/api';
import { Backoff, hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { Expectations } from '../util/expectations.js';
import { controllerRef, isPodReady, keyOf, ownerKey } from '../util/pods.js';
import { CONTROLLER_REVISION_HASH_LABEL, maxRevisionNumber, newControllerRevision, revisionMatches, revisionsToPrune, templateHash } from '../util/history.js';
import { TEMPLATE_GENERATION_ANNOTATION } from '../../apiserver/strategies/apps-controllers.js';
import { daemonPodFor, targetNodeName } from './eligibility.js';
import { daemonSetStatus, nodeStates, planNodes, planRollingUpdate } from './plan.js';

const dsKeyOf = (o: Pod | ControllerRevision): string | undefined => ownerKey(o, 'DaemonSet');

export class DaemonSetController extends ControllerBase {
  readonly #dss;
  readonly #pods;
  readonly #nodes;
  readonly #revisions;
  readonly #expect: Expectations;
  /** Per `<ds key>|<node>`: when a failed pod there may be replaced again (upstream failedPodsBackoff 1 s → 15 min). */
  readonly #failedBackoff: Backoff;
  readonly #retryAt = new Map<string, number>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'daemonset', eventComponent: 'daemonset-controller' });
    this.#expect = new Expectations(d.clock);
    this.#failedBackoff = new Backoff({ initialMs: 1_000, maxMs: 15 * 60_000, resetAfterMs: 30 * 60_000, clock: d.clock });
    this.#dss = this.watch(DAEMONSETS);
    this.#pods = this.watchOwnedPods(dsKeyOf, this.#expect);
    this.#revisions = this.watch(CONTROLLERREVISIONS, dsKeyOf, ['delete']);
    // Any node change can change where daemons belong.
    const all = (): void => {
      for (const ds of this.#dss.list()) this.queue.add(keyOf(ds));
    };
    this.#nodes = this.informer(NODES);
    this.handle(this.#nodes, { onAdd: all, onUpdate: (o: Node, n: Node) => (relevantNode(o) !== relevantNode(n) ? all() : undefined), onDelete: all });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const ds = this.#dss.get(key);
    if (!ds) {
      this.#expect.forget(key);
      for (const k of this.#retryAt.keys()) if (k.startsWith(`${key}|`)) this.#retryAt.delete(k);
      return;
    }
    if (ds.metadata.deletionTimestamp) return;
    const ns = ds.metadata.namespace;
    const now = this.clock.now();

    // 1. History: the current revision and its hash.
    const { current, hash, all } = await this.#constructHistory(ds, signal);
    const gen = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];

    // 2. Pods by the node they target.
    const sel = labelSelectorFromObject(ds.spec?.selector);
    const owned = this.#pods.list().filter((p) => p.metadata.namespace === ns && controllerRef(p)?.uid === ds.metadata.uid && matchLabels(sel, p.metadata.labels));
    const byNode = new Map<string, Pod[]>();
    const nodes = this.#nodes.list();
    const nodeNames = new Set(nodes.map((n) => n.metadata.name));
    const strays: Pod[] = [];
    for (const p of owned) {
      if (p.metadata.deletionTimestamp) continue;
      const n = targetNodeName(p);
      if (!n || (!nodeNames.has(n) && !p.spec?.nodeName)) strays.push(p);
      else (byNode.get(n) ?? byNode.set(n, []).get(n)!).push(p);
    }
    const states = nodeStates(ds, nodes, byNode);

    // 3. Create and delete (only when the informer has seen our last round).
    let requeueAfterMs: number | undefined;
    if (this.#expect.satisfied(key)) {
      const plan = planNodes(ds, states, hash, gen, (node) => this.#mayRetryFailed(key, node, now));
      for (const node of plan.failedOn) {
        this.#noteFailed(key, node, now);
        void this.event(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${ns}/${plan.delete.find((p) => targetNodeName(p) === node)?.metadata.name} on node ${node}, will try to kill it`);
      }
      const rolling = planRollingUpdate(ds, states, hash, gen, now);
      const del = dedupe([...strays, ...plan.delete, ...rolling.delete]);
      const create = [...new Set([...plan.createOn, ...rolling.createOn])];
      this.#expect.expect(key, create.length, del.length);
      await this.deleteOwnedPods(ds, key, del, this.#expect, signal);
      await this.#createPods(key, ds, create, hash, gen, signal);
      const waits = [...this.#retryAt.entries()].filter(([k]) => k.startsWith(`${key}|`)).map(([, at]) => at - now).filter((ms) => ms > 0);
      if (waits.length) requeueAfterMs = Math.min(...waits);
    }

    // 4. History beyond revisionHistoryLimit, never a revision a pod still runs.
    const inUse = new Set(owned.map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? ''));
    for (const r of revisionsToPrune(all, current, inUse, ds.spec?.revisionHistoryLimit ?? 10)) {
      await this.client.resource(CONTROLLERREVISIONS, ns).delete(r.metadata.name ?? '', { signal }).catch((err: unknown) => {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      });
    }

    // 5. Status (from the cache; the next event brings the effect of this round's writes).
    const status = daemonSetStatus(ds, states, hash, gen, now);
    if (JSON.stringify(status) !== JSON.stringify({ ...ds.status, conditions: undefined })) {
      try {
        await this.client.resource(DAEMONSETS, ns).updateStatus({ ...ds, status }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    const minReady = ds.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && owned.some((p) => isPodReady(p))) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, minReady * 1000);
    if (requeueAfterMs !== undefined) return { requeueAfterMs };
  }

  /** Upstream constructHistory: find or create the revision of the current template; a reused one moves to the top. */
  async #constructHistory(ds: DaemonSet, signal: AbortSignal): Promise<{ current: ControllerRevision; hash: string; all: ControllerRevision[] }> {
    const ns = ds.metadata.namespace;
    const revs = this.client.resource(CONTROLLERREVISIONS, ns);
    const all = this.#revisions.list().filter((r) => r.metadata.namespace === ns && controllerRef(r)?.uid === ds.metadata.uid);
    const max = maxRevisionNumber(all);
    const matching = all.filter((r) => revisionMatches(r, ds.spec?.template)).sort((a, b) => b.revision - a.revision);
    let current = matching[0];
    for (const dup of matching.slice(1)) await revs.delete(dup.metadata.name ?? '', { signal }).catch(() => undefined); // a duplicate left behind still matches: deleted on the next sync
    if (current && current.revision < max) current = await revs.update({ ...current, revision: max + 1 }, { signal });
    if (!current) {
      const collisions = ds.status?.collisionCount ?? 0;
      const hash = templateHash(ds.spec?.template, collisions);
      try {
        current = await revs.create(newControllerRevision(ds, { apiVersion: 'apps/v1', kind: 'DaemonSet' }, ds.spec?.template, max + 1, hash), { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
        const existing = await revs.get(`${ds.metadata.name}-${hash}`, { signal });
        if (controllerRef(existing)?.uid !== ds.metadata.uid || !revisionMatches(existing, ds.spec?.template)) {
          // Someone else's revision has our name: a new collisionCount gives a new hash next time.
          await this.client.resource(DAEMONSETS, ns).updateStatus({ ...ds, status: { ...(ds.status ?? { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }), collisionCount: collisions + 1 } }, { signal });
          throw err;
        }
        current = existing;
      }
    }
    const hash = current.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? current.metadata.name!.slice((ds.metadata.name ?? '').length + 1);
    return { current, hash, all: [...all.filter((r) => r.metadata.name !== current!.metadata.name), current] };
  }

  #mayRetryFailed(key: string, node: string, now: number): boolean {
    return (this.#retryAt.get(`${key}|${node}`) ?? 0) <= now;
  }

  #noteFailed(key: string, node: string, now: number): void {
    const k = `${key}|${node}`;
    this.#retryAt.set(k, now + this.#failedBackoff.next(k));
  }

  async #createPods(key: string, ds: DaemonSet, nodes: string[], hash: string, gen: string | undefined, signal: AbortSignal): Promise<void> {
    const pods = this.client.resource(PODS, ds.metadata.namespace);
    const results = await Promise.allSettled(nodes.map((n) => pods.create(daemonPodFor(ds, n, hash, gen), { signal })));
    let firstErr: unknown;
    results.forEach((r) => {
      if (r.status === 'fulfilled') return void this.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value.metadata.name}`);
      this.#expect.lowerAdd(key);
      void this.event(ds, 'Warning', 'FailedCreate', `Error creating: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`);
      firstErr ??= r.reason;
    });
    if (firstErr) throw firstErr;
  }
}

function relevantNode(n: Node): string {
  return JSON.stringify([n.metadata.labels, n.spec?.taints, n.spec?.unschedulable]);
}

function dedupe(pods: Pod[]): Pod[] {
  const seen = new Set<string>();
  return pods.filter((p) => !seen.has(p.metadata.uid ?? '') && !!seen.add(p.metadata.uid ?? ''));
}
