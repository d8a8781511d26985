/**
 * The CRD controllers of kube's apiextensions-apiserver, in-process and in one loop: for every
 * CustomResourceDefinition, check its names against everything else served (NamesAccepted),
 * serve its versions from the catalog and mark it Established; for a CRD being deleted, delete
 * every object it defines, stop serving it and drop the `customresourcecleanup` finalizer so the
 * CRD goes. Runs on every CRD change (a watch on the CRD cache) and every few seconds until the
 * server's shutdown signal.
 */
import { delay, isAbortError, type Logger } from '@nodelet/base';
import { rfc3339 } from '@nodelet/api';
import type { ResourceCatalog } from '../catalog.js';
import type { ServedResource, ServerContext } from '../context.js';
import { MATCH_ALL } from '../filter.js';
import { ResourceMirror } from '../mirror.js';
import { deleteObject, finishDeletionIfReady } from '../handlers/delete.js';
import type { ApiObject } from '../object.js';
import { StatusError } from '../status.js';
import { customResourceDefs } from './custom-defs.js';
import { CLEANUP_FINALIZER, type CrdCondition, type CrdSpec } from './types.js';

/** Where the CRD kind is served. */
export const CRD_GVR = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' } as const;

/**
 * Why `spec`'s names clash with what the catalog serves for other owners, or undefined. Upstream
 * checks plural, singular, shortNames and kind within the group.
 */
export function namesConflict(spec: CrdSpec, crdName: string, catalog: ResourceCatalog): string | undefined {
  for (const r of catalog.all()) {
    const d = r.def;
    if (d.group !== spec.group) continue;
    const owner = d.custom ? `${d.plural}.${d.group}` : undefined;
    if (owner === crdName) continue;
    if (d.plural === spec.names.plural) return `"${spec.names.plural}" is already in use`;
    if (spec.names.singular && d.singular === spec.names.singular) return `"${spec.names.singular}" is already in use`;
    if (d.kind === spec.names.kind) return `"${spec.names.kind}" is already in use`;
    for (const s of spec.names.shortNames ?? []) if (d.shortNames?.includes(s)) return `"${s}" is already in use`;
  }
  return undefined;
}

function setCondition(conds: CrdCondition[], c: CrdCondition, now: string): CrdCondition[] {
  const old = conds.find((x) => x.type === c.type);
  const next = { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
  return [...conds.filter((x) => x.type !== c.type), next];
}

/**
 * Starts the loop. `ready` resolves after the first pass (the server awaits it, so CRDs stored
 * before a restart are served from the first request); `done` when the loop has stopped.
 */
export function startCrdController(ctx: ServerContext, catalog: ResourceCatalog, log: Logger, intervalMs = 5000): { ready: Promise<void>; done: Promise<void> } {
  const crds = catalog.get(CRD_GVR.group, CRD_GVR.version, CRD_GVR.plural)!;
  /**
   * CRD name → the spec its served definitions were built from: rebuilding ends the kind's open
   * watches, so a status or metadata change of the CRD must not.
   */
  const builtFrom = new Map<string, string>();
  let wake: (() => void) | undefined;
  let dirty = true;
  const poke = (): void => {
    dirty = true;
    wake?.();
  };
  const mirror = new ResourceMirror({ served: crds, logger: log, stop: ctx.shutdown });
  const unsubscribe = mirror.onChange(poke);
  void mirror.start().catch((err: unknown) => log.warn({ err }, 'CustomResourceDefinition watch failed; the periodic sync goes on'));

  let firstPass!: () => void;
  const ready = new Promise<void>((r) => (firstPass = r));
  const done = (async () => {
    try {
      while (!ctx.shutdown.aborted) {
        if (dirty) {
          dirty = false;
          try {
            await reconcileAll();
          } catch (err) {
            if (ctx.shutdown.aborted) return;
            dirty = true;
            log.warn({ err }, 'CustomResourceDefinition sync failed');
          }
          firstPass();
        }
        try {
          await Promise.race([delay(intervalMs, ctx.shutdown), new Promise<void>((r) => (wake = r))]);
        } catch (err) {
          if (isAbortError(err)) return;
          throw err;
        }
        // Also on a timer: a CRD being deleted waits for its objects' own finalizers.
        dirty = true;
      }
    } finally {
      unsubscribe();
      firstPass();
    }
  })();
  return { ready, done };

  async function reconcileAll(): Promise<void> {
    const list = (await crds.registry.list({ filter: MATCH_ALL })).items;
    list.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name!.localeCompare(b.metadata.name!));
    const present = new Set(list.map((c) => c.metadata.name!));
    for (const name of builtFrom.keys()) {
      if (!present.has(name)) {
        catalog.removeCustom(name);
        builtFrom.delete(name);
      }
    }
    for (const crd of list) await reconcile(crd);
  }

  async function reconcile(crd: ApiObject): Promise<void> {
    const name = crd.metadata.name!;
    const spec = crd.spec as CrdSpec;
    if (crd.metadata.deletionTimestamp) return cleanup(crd);
    const conflict = namesConflict(spec, name, catalog);
    const now = rfc3339(ctx.now());
    const specJson = JSON.stringify(spec);
    if (!conflict && builtFrom.get(name) !== specJson) {
      catalog.setCustom(name, customResourceDefs(spec));
      builtFrom.set(name, specJson);
      log.info({ crd: name, versions: spec.versions.filter((v) => v.served).map((v) => v.name) }, 'Serving custom resource');
    }
    await crds.registry.guaranteedUpdate(undefined, name, (current) => {
      const status = { ...((current.status ?? {}) as Record<string, unknown>) };
      let conds = (status.conditions ?? []) as CrdCondition[];
      const established = conds.some((c) => c.type === 'Established' && c.status === 'True');
      if (conflict) {
        conds = setCondition(conds, { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: conflict }, now);
        if (!established) conds = setCondition(conds, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
      } else {
        conds = setCondition(conds, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
        conds = setCondition(conds, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
        status.acceptedNames = { ...spec.names };
      }
      status.conditions = conds;
      status.acceptedNames ??= { plural: '', kind: '' };
      const storage = spec.versions.find((v) => v.storage)?.name;
      const stored = new Set((status.storedVersions ?? []) as string[]);
      if (storage && !conflict) stored.add(storage);
      status.storedVersions = [...stored];
      if (JSON.stringify(status) === JSON.stringify(current.status ?? {})) return undefined;
      return { ...current, status };
    });
  }

  /** Deletes every object of a CRD being deleted, then lets the CRD go. */
  async function cleanup(crd: ApiObject): Promise<void> {
    const name = crd.metadata.name!;
    const served = catalog.custom(name)?.[0];
    if (served) {
      catalog.setTerminating(name, true);
      await markTerminating(name);
    }
    if (served && (await deleteAll(served)) > 0) return;
    catalog.removeCustom(name);
    builtFrom.delete(name);
    if (!crd.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return;
    const { object } = await crds.registry.guaranteedUpdate(undefined, name, (current) => {
      const finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
      return { ...current, metadata: { ...current.metadata, finalizers } };
    });
    await finishDeletionIfReady(crds, object);
    log.info({ crd: name }, 'CustomResourceDefinition removed with its objects');
  }

  /** Upstream's Terminating condition while the objects are deleted. */
  async function markTerminating(name: string): Promise<void> {
    const now = rfc3339(ctx.now());
    await crds.registry.guaranteedUpdate(undefined, name, (current) => {
      const status = { ...((current.status ?? {}) as Record<string, unknown>) };
      const conds = (status.conditions ?? []) as CrdCondition[];
      if (conds.some((c) => c.type === 'Terminating' && c.status === 'True')) return undefined;
      status.conditions = setCondition(conds, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now);
      return { ...current, status };
    });
  }

  /** Deletes every object of `served`; returns how many are left (those waiting for their own finalizers). */
  async function deleteAll(served: ServedResource): Promise<number> {
    const page = await served.registry.list({ filter: MATCH_ALL });
    for (const o of page.items) {
      if (o.metadata.deletionTimestamp) continue;
      await deleteObject(ctx, served, o.metadata.namespace, o.metadata.name!, {}).catch((err: unknown) => {
        if (!(err instanceof StatusError && err.reason === 'NotFound')) throw err;
      });
    }
    return page.items.length ? (await served.registry.list({ filter: MATCH_ALL, limit: 1 })).items.length : 0;
  }
}
