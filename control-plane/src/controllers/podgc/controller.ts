/**
 * Pod garbage collector (upstream `podgc`): force-deletes (grace 0) pods that no agent will ever
 * finish — pods bound to a node that no longer exists (after a 40 s quarantine, confirmed with
 * a live GET of the node), and terminating pods that were never scheduled. Checks every 20 s.
 */
import { NODES, PODS, type Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf, splitKey } from '../util/pods.js';

export const POD_GC_PERIOD_MS = 20_000;
export const ORPHAN_QUARANTINE_MS = 40_000;

export class PodGarbageCollector extends ControllerBase {
  readonly #pods;
  readonly #nodes;
  /** Pods seen on a missing node: since when (our clock). */
  readonly #suspects = new Map<string, number>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'podgc', workers: 1 });
    this.#pods = this.informer(PODS);
    this.#nodes = this.informer(NODES);
    this.every(POD_GC_PERIOD_MS, () => this.#pods.list().filter((p) => this.#candidate(p)).map(keyOf));
  }

  #candidate(p: Pod): boolean {
    const node = p.spec?.nodeName;
    if (!node) return !!p.metadata.deletionTimestamp;
    return !this.#nodes.get(node);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const pod = this.#pods.get(key);
    if (!pod || !this.#candidate(pod)) {
      this.#suspects.delete(key);
      return;
    }
    const node = pod.spec?.nodeName;
    if (node) {
      const since = this.#suspects.get(key) ?? this.clock.now();
      this.#suspects.set(key, since);
      if (this.clock.now() - since < ORPHAN_QUARANTINE_MS) return;
      try {
        await this.client.get(NODES, node, { signal });
        this.#suspects.delete(key); // the node exists; our cache was behind
        return;
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    const { namespace, name } = splitKey(key);
    try {
      await this.client.resource(PODS, namespace).delete(name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid }, signal });
      this.log.info({ pod: key, node }, node ? 'Deleted pod of a node that no longer exists' : 'Deleted terminating pod that was never scheduled');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
    this.#suspects.delete(key);
  }
}
