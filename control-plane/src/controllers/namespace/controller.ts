/**
 * Namespace lifecycle (the one place namespaces are emptied): a namespace being deleted goes
 * `Terminating`, its contents are deleted kind by kind — every namespaced kind the server's
 * discovery lists with list and delete, custom resources included, one version per resource, as
 * upstream's namespaced-resources deleter reads it — and once nothing is left the `kubernetes`
 * finalizer is removed (PUT namespaces/<name>/finalize), on which the server removes the namespace
 * (handlers/delete.ts, finishDeletionIfReady). Pods on nodes take their grace period, so the
 * controller re-checks every second until the namespace is empty.
 */
import { NAMESPACES, type KubeObject, type Namespace, type ResourceType } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
const RECHECK_MS = 1_000;
const AGGREGATED_DISCOVERY = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

interface DiscoveredResource {
  resource: string;
  scope: string;
  verbs?: string[];
  singularResource?: string;
  responseKind?: { kind?: string };
}
interface DiscoveryList {
  items?: Array<{ metadata?: { name?: string }; versions?: Array<{ version: string; resources?: DiscoveredResource[] }> }>;
}

/**
 * The namespaced kinds of an aggregated discovery document (`/api` or `/apis`) that can be listed
 * and deleted, in the group's preferred (first) version: versions of one resource share storage.
 */
export function namespacedKinds(doc: DiscoveryList): ResourceType[] {
  const out: ResourceType[] = [];
  for (const g of doc.items ?? []) {
    const group = g.metadata?.name ?? '';
    const seen = new Set<string>();
    for (const v of g.versions ?? []) {
      for (const r of v.resources ?? []) {
        if (r.scope !== 'Namespaced' || seen.has(r.resource) || !r.verbs?.includes('list') || !r.verbs.includes('delete')) continue;
        seen.add(r.resource);
        out.push({ group, version: v.version, kind: r.responseKind?.kind ?? '', plural: r.resource, singular: r.singularResource ?? '', namespaced: true });
      }
    }
  }
  return out;
}

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
    for (const r of await this.#discover(signal)) remaining += await this.#deleteAll(r, name, signal);
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

  /** Read on every pass: custom resources come and go while a namespace empties. */
  async #discover(signal: AbortSignal): Promise<ResourceType[]> {
    const docs = await Promise.all(['/api', '/apis'].map(async (path) => JSON.parse((await this.client.getRaw(path, { accept: AGGREGATED_DISCOVERY, signal })).toString()) as DiscoveryList));
    return docs.flatMap(namespacedKinds);
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
