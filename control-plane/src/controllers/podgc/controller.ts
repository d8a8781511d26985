/**
 * Pod garbage collector (upstream `podgc`): force-deletes (grace 0) pods that no agent will ever
 * finish — pods bound to a node that no longer exists (after a 40 s quarantine, confirmed with
 * a live GET of the node), and terminating pods that were never scheduled. Checks every 20 s.
 */
import { NODES, PODS, type ApiClient, type Pod } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type SharedInformers } from '../runtime.js';
import { keyOf, splitKey } from '../util/pods.js';

export const POD_GC_PERIOD_MS = 20_000;
export const ORPHAN_QUARANTINE_MS = 40_000;

export interface PodGcDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
}

export class PodGarbageCollector implements Controller {
  readonly name = 'podgc';
  readonly queue;
  readonly workers = 1;
  readonly #d: PodGcDeps;
  readonly #pods;
  readonly #nodes;
  /** Pods seen on a missing node: since when (our clock). */
  readonly #suspects = new Map<string, number>();

  constructor(d: PodGcDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#pods = d.informers.for(PODS);
    this.#nodes = d.informers.for(NODES);
  }

  start(signal: AbortSignal): void {
    const tick = (): void => {
      if (signal.aborted) return;
      for (const p of this.#pods.list()) if (this.#candidate(p)) this.queue.add(keyOf(p));
      cancel = this.#d.clock.setTimer(POD_GC_PERIOD_MS, tick);
    };
    let cancel = this.#d.clock.setTimer(POD_GC_PERIOD_MS, tick);
    signal.addEventListener('abort', () => cancel(), { once: true });
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
      const since = this.#suspects.get(key) ?? this.#d.clock.now();
      this.#suspects.set(key, since);
      if (this.#d.clock.now() - since < ORPHAN_QUARANTINE_MS) return;
      try {
        await this.#d.client.get(NODES, node, { signal });
        this.#suspects.delete(key); // the node exists; our cache was behind
        return;
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
    const { namespace, name } = splitKey(key);
    try {
      await this.#d.client.resource(PODS, namespace).delete(name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid }, signal });
      this.#d.logger.info({ pod: key, node }, node ? 'Deleted pod of a node that no longer exists' : 'Deleted terminating pod that was never scheduled');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
    this.#suspects.delete(key);
  }
}
