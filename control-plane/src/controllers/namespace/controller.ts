/**
 * Namespace lifecycle: a namespace being deleted goes `Terminating`, its contents are deleted
 * kind by kind, and once nothing is left the `kubernetes` finalizer is removed (PUT
 * namespaces/<name>/finalize) so the server can remove the namespace. Pods on nodes take their
 * grace period, so the controller re-checks every second until the namespace is empty.
 */
import { NAMESPACES, RESOURCES, type KubeObject, type Namespace, type ResourceType } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
const RECHECK_MS = 1_000;

export class NamespaceController extends ControllerBase {
  readonly #namespaces;

  constructor(d: ControllerDeps) {
    super(d, { name: 'namespace' });
    this.#namespaces = this.watch(NAMESPACES, (n) => (n.metadata.deletionTimestamp ? (n.metadata.name ?? '') : undefined), ['add', 'update']);
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let ns = this.#namespaces.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    const client = this.client;
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
    this.log.info({ namespace: name }, 'Namespace emptied and finalized');
  }

  async #exists(name: string, signal: AbortSignal): Promise<boolean> {
    try {
      await this.client.get(NAMESPACES, name, { signal });
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
      items = (await this.client.listAll(r, { namespace: ns, signal })).items;
    } catch (err) {
      // A kind this server does not serve has nothing to delete.
      if (hasCode(err, 'ERR_NOT_FOUND') || hasCode(err, 'ERR_UNIMPLEMENTED')) return 0;
      throw err;
    }
    for (const o of items) {
      if (o.metadata.deletionTimestamp) continue;
      try {
        await this.client.delete(r, o.metadata.name ?? '', { namespace: ns, propagationPolicy: 'Background', signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
      }
    }
    return items.length;
  }
}
