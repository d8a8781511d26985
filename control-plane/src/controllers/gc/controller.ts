/**
 * Garbage collector: cascading deletion through ownerReferences (upstream `garbagecollector`).
 *
 *   background  owner gone (404 or another uid) ──▶ dependent deleted; a dependent with some
 *               owners left only loses the dangling references
 *   foreground  owner has deletionTimestamp + finalizer `foregroundDeletion` ──▶ its dependents
 *               are deleted (in foreground when blockOwnerDeletion); once no blocking dependent
 *               is left, the finalizer is removed and the server finishes the delete
 *   orphan      owner has finalizer `orphan` ──▶ its reference is removed from every dependent,
 *               then the finalizer
 *
 * The graph (uid → object, owner uid → dependents) is built from shared informers of the kinds
 * that own or are owned in this cluster, and of every custom resource while its CRD is
 * Established (one informer per CRD: its versions share one storage). An owner missing from the cache is confirmed with a
 * live GET before anything is deleted (the owner's watch may simply lag).
 */
import { CONFIGMAPS, CONTROLLERREVISIONS, CRONJOBS, CUSTOMRESOURCEDEFINITIONS, DAEMONSETS, DEPLOYMENTS, JOBS, PERSISTENTVOLUMECLAIMS, STATEFULSETS, ENDPOINTSLICES, LEASES, NODES, PODS, REPLICASETS, REPLICATIONCONTROLLERS, SECRETS, SERVICES, apiVersionOf, customResourceTypes, findResourceByKind, objectKey, type CustomResourceDefinition, type Informer, type KubeObject, type OwnerReference, type ResourceType } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** Kinds whose objects take part in ownership here. */
export const GC_RESOURCES: readonly ResourceType[] = [
  DEPLOYMENTS, REPLICASETS, DAEMONSETS, STATEFULSETS, CONTROLLERREVISIONS, JOBS, CRONJOBS, PODS, PERSISTENTVOLUMECLAIMS,
  SERVICES, ENDPOINTSLICES, CONFIGMAPS, SECRETS, NODES, LEASES, REPLICATIONCONTROLLERS,
];

interface Ref {
  r: ResourceType;
  key: string;
}

const itemKey = (r: ResourceType, key: string): string => `${r.group}/${r.plural}|${key}`;

export class GarbageCollector extends ControllerBase {
  readonly #inf = new Map<string, { r: ResourceType; informer: Informer<KubeObject> }>();
  readonly #byUid = new Map<string, Ref>();
  readonly #dependents = new Map<string, Set<string>>();

  /** apiVersion/kind → resource type, of every served version of the custom resources watched. */
  readonly #customKinds = new Map<string, ResourceType>();
  readonly #informers: ControllerDeps['informers'];

  constructor(d: ControllerDeps) {
    super(d, { name: 'garbagecollector', workers: 4 });
    this.#informers = d.informers;
    for (const r of GC_RESOURCES) this.#watchKind(r);
    const crds = this.informer(CUSTOMRESOURCEDEFINITIONS);
    this.handle(crds, {
      onAdd: (c) => this.#crdChanged(c),
      onUpdate: (_old, c) => this.#crdChanged(c),
      onDelete: (c) => void this.#crdGone(c),
    });
  }

  #watchKind(r: ResourceType): void {
    const informer = this.informer(r as ResourceType<KubeObject>);
    this.#inf.set(`${r.group}/${r.plural}`, { r, informer });
    this.handle(informer, {
      onAdd: (o) => this.#observe(r, o),
      onUpdate: (old, o) => this.#observe(r, o, old),
      onDelete: (o) => this.#gone(r, o),
    });
  }

  /** An Established CRD: its objects join the graph; one no longer served leaves it. */
  #crdChanged(crd: CustomResourceDefinition): void {
    const types = customResourceTypes(crd);
    if (!types.length) return void this.#crdGone(crd);
    for (const t of types) this.#customKinds.set(`${apiVersionOf(t)}|${t.kind}`, t);
    if (!this.#inf.has(`${crd.spec.group}/${crd.spec.names.plural}`)) this.#watchKind(types[0]!);
  }

  async #crdGone(crd: CustomResourceDefinition): Promise<void> {
    const key = `${crd.spec.group}/${crd.spec.names.plural}`;
    for (const [k, t] of this.#customKinds) if (`${t.group}/${t.plural}` === key) this.#customKinds.delete(k);
    const entry = this.#inf.get(key);
    if (!entry) return;
    this.#inf.delete(key);
    await this.#informers.drop(entry.r);
  }

  #observe(r: ResourceType, o: KubeObject, old?: KubeObject): void {
    const key = objectKey(o);
    const item = itemKey(r, key);
    const uid = o.metadata.uid;
    if (uid) this.#byUid.set(uid, { r, key });
    for (const ref of old?.metadata.ownerReferences ?? []) this.#dependents.get(ref.uid)?.delete(item);
    for (const ref of o.metadata.ownerReferences ?? []) {
      let s = this.#dependents.get(ref.uid);
      if (!s) this.#dependents.set(ref.uid, (s = new Set()));
      s.add(item);
      // A dependent changing may unblock an owner waiting in foreground deletion.
      const owner = this.#byUid.get(ref.uid);
      if (owner) this.queue.add(itemKey(owner.r, owner.key));
    }
    if (o.metadata.ownerReferences?.length || o.metadata.deletionTimestamp) this.queue.add(item);
  }

  #gone(r: ResourceType, o: KubeObject): void {
    const item = itemKey(r, objectKey(o));
    const uid = o.metadata.uid;
    for (const ref of o.metadata.ownerReferences ?? []) {
      this.#dependents.get(ref.uid)?.delete(item);
      const owner = this.#byUid.get(ref.uid);
      if (owner) this.queue.add(itemKey(owner.r, owner.key));
    }
    if (!uid) return;
    if (this.#byUid.get(uid)?.key === objectKey(o)) this.#byUid.delete(uid);
    // Its dependents may now be orphans to collect.
    for (const dep of this.#dependents.get(uid) ?? []) this.queue.add(dep);
  }

  #get(item: string): { r: ResourceType; obj: KubeObject } | undefined {
    const i = item.indexOf('|');
    const entry = this.#inf.get(item.slice(0, i));
    const obj = entry?.informer.get(item.slice(i + 1));
    return entry && obj ? { r: entry.r, obj } : undefined;
  }

  #dependentsOf(uid: string): Array<{ r: ResourceType; obj: KubeObject; ref: OwnerReference }> {
    const out = [];
    for (const dep of this.#dependents.get(uid) ?? []) {
      const d = this.#get(dep);
      const ref = d?.obj.metadata.ownerReferences?.find((x) => x.uid === uid);
      if (d && ref) out.push({ ...d, ref });
    }
    return out;
  }

  async reconcile(item: string, signal: AbortSignal): Promise<void> {
    const cur = this.#get(item);
    if (!cur) return;
    const { r, obj } = cur;
    const finalizers = obj.metadata.finalizers ?? [];
    if (obj.metadata.deletionTimestamp && finalizers.includes(ORPHAN_FINALIZER)) {
      await this.#orphanDependents(obj, signal);
      await this.#removeFinalizer(r, obj, ORPHAN_FINALIZER, signal);
      return;
    }
    if (obj.metadata.deletionTimestamp && finalizers.includes(FOREGROUND_FINALIZER)) {
      const deps = this.#dependentsOf(obj.metadata.uid ?? '');
      for (const d of deps) {
        if (d.obj.metadata.deletionTimestamp) continue;
        await this.#delete(d.r, d.obj, d.ref.blockOwnerDeletion ? 'Foreground' : 'Background', signal);
      }
      if (!deps.some((d) => d.ref.blockOwnerDeletion)) await this.#removeFinalizer(r, obj, FOREGROUND_FINALIZER, signal);
      return;
    }
    await this.#collectIfOrphaned(r, obj, signal);
  }

  /** Background deletion: owners all gone → delete; some gone → drop those references. */
  async #collectIfOrphaned(r: ResourceType, obj: KubeObject, signal: AbortSignal): Promise<void> {
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0 || obj.metadata.deletionTimestamp) return;
    const dangling: OwnerReference[] = [];
    for (const ref of refs) {
      // An owner in foreground deletion counts as present: its own item deletes this one.
      if ((await this.#ownerState(ref, obj, signal)) === 'absent') dangling.push(ref);
    }
    if (dangling.length === refs.length) {
      this.log.debug({ object: objectKey(obj), kind: r.kind }, 'Deleting object whose owners are gone');
      await this.#delete(r, obj, 'Background', signal);
    } else if (dangling.length > 0) {
      const keep = refs.filter((x) => !dangling.includes(x));
      await this.#patchMeta(r, obj, { ownerReferences: keep }, signal);
    }
  }

  async #ownerState(ref: OwnerReference, dependent: KubeObject, signal: AbortSignal): Promise<'present' | 'absent' | 'deleting-foreground'> {
    const known = this.#byUid.get(ref.uid);
    const ownerR = known?.r ?? findResourceByKind(ref.apiVersion, ref.kind) ?? this.#customKinds.get(`${ref.apiVersion}|${ref.kind}`);
    if (!ownerR) return 'present'; // a kind we do not know: never collect on a guess
    const cached = known ? this.#inf.get(`${ownerR.group}/${ownerR.plural}`)?.informer.get(known.key) : undefined;
    let owner = cached;
    if (!owner) {
      try {
        owner = await this.client.get(ownerR, ref.name, { namespace: ownerR.namespaced ? dependent.metadata.namespace : undefined, signal });
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return 'absent';
        throw err;
      }
    }
    if (owner.metadata.uid !== ref.uid) return 'absent';
    if (owner.metadata.deletionTimestamp && owner.metadata.finalizers?.includes(FOREGROUND_FINALIZER)) return 'deleting-foreground';
    return 'present';
  }

  async #orphanDependents(owner: KubeObject, signal: AbortSignal): Promise<void> {
    for (const d of this.#dependentsOf(owner.metadata.uid ?? '')) {
      const keep = (d.obj.metadata.ownerReferences ?? []).filter((x) => x.uid !== owner.metadata.uid);
      await this.#patchMeta(d.r, d.obj, { ownerReferences: keep }, signal);
    }
  }

  async #removeFinalizer(r: ResourceType, obj: KubeObject, finalizer: string, signal: AbortSignal): Promise<void> {
    await this.#patchMeta(r, obj, { finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer) }, signal);
  }

  /** Merge patch of metadata lists, conditional on the resourceVersion we decided on. */
  async #patchMeta(r: ResourceType, obj: KubeObject, meta: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    try {
      await this.client.patch(r, obj.metadata.name ?? '', { metadata: { ...meta, resourceVersion: obj.metadata.resourceVersion } }, { type: 'merge', namespace: obj.metadata.namespace, signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }

  async #delete(r: ResourceType, obj: KubeObject, propagationPolicy: 'Foreground' | 'Background', signal: AbortSignal): Promise<void> {
    try {
      await this.client.delete(r, obj.metadata.name ?? '', { namespace: obj.metadata.namespace, propagationPolicy, preconditions: { uid: obj.metadata.uid }, signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
  }
}
