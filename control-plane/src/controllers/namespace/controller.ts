/**
 * Namespace lifecycle: a namespace being deleted goes `Terminating`, its contents are deleted
 * kind by kind, and once nothing is left the `kubernetes` finalizer is removed (PUT
 * namespaces/<name>/finalize) so the server can remove the namespace. Pods on nodes take their
 * grace period, so the controller re-checks every second until the namespace is empty.
 */
import { NAMESPACES, RESOURCES, type ApiClient, type KubeObject, type Namespace, type ResourceType } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type ReconcileResult, type SharedInformers } from '../runtime.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
const RECHECK_MS = 1_000;

export interface NamespaceDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
}

export class NamespaceController implements Controller {
  readonly name = 'namespace';
  readonly queue;
  readonly workers = 2;
  readonly #d: NamespaceDeps;
  readonly #namespaces;

  constructor(d: NamespaceDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#namespaces = d.informers.for(NAMESPACES);
    const enqueue = (n: Namespace): void => {
      if (n.metadata.deletionTimestamp) this.queue.add(n.metadata.name ?? '');
    };
    this.#namespaces.on({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n) });
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let ns = this.#namespaces.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    const client = this.#d.client;
    if (ns.status?.phase !== 'Terminating') {
      ns = await client.resource(NAMESPACES).updateStatus({ ...ns, status: { ...ns.status, phase: 'Terminating' } }, { signal });
    }
    // Delete everything namespaced; count what is still there.
    let remaining = 0;
    for (const r of RESOURCES.filter((x) => x.namespaced)) remaining += await this.#deleteAll(r, name, signal);
    if (remaining > 0) return { requeueAfterMs: RECHECK_MS };
    if (!(ns.spec?.finalizers ?? []).includes(NAMESPACE_FINALIZER)) return;
    const finalized: Namespace = { ...ns, spec: { ...ns.spec, finalizers: (ns.spec?.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER) } };
    try {
      await client.update(NAMESPACES, finalized, { subresource: 'finalize', signal });
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND') && !(await this.#exists(name, signal))) return;
      // A server without the finalize subresource: drop the finalizer through the main resource.
      if (hasCode(err, 'ERR_NOT_FOUND') || hasCode(err, 'ERR_UNIMPLEMENTED')) await client.update(NAMESPACES, finalized, { signal });
      else throw err;
    }
    this.#d.logger.info({ namespace: name }, 'Namespace emptied and finalized');
  }

  async #exists(name: string, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#d.client.get(NAMESPACES, name, { signal });
      return true;
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) return false;
      throw err;
    }
  }

  /** Deletes every object of `r` in `ns`; returns how many still exist (terminating included). */
  async #deleteAll(r: ResourceType, ns: string, signal: AbortSignal): Promise<number> {
    let items: KubeObject[];
    try {
      items = (await this.#d.client.listAll(r, { namespace: ns, signal })).items;
    } catch (err) {
      // A kind this server does not serve has nothing to delete.
      if (hasCode(err, 'ERR_NOT_FOUND') || hasCode(err, 'ERR_UNIMPLEMENTED')) return 0;
      throw err;
    }
    for (const o of items) {
      if (o.metadata.deletionTimestamp) continue;
      try {
        await this.#d.client.delete(r, o.metadata.name ?? '', { namespace: ns, propagationPolicy: 'Background', signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
      }
    }
    return items.length;
  }
}
