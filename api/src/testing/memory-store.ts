/**
 * The object store behind InMemoryApiServer: one global revision counter (= resourceVersion),
 * compare-and-swap updates, a bounded event history for watches, and compaction (→ 410).
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject, Status } from '../types/meta.js';
import { apiVersionOf, type ResourceType } from '../types/resources.js';

export interface StoreEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  resource: ResourceType;
  object: KubeObject;
  /** The object before this change (MODIFIED/DELETED), for selector enter/leave. */
  prev?: KubeObject;
}

/** A failure with the Status the HTTP layer replies with. */
export class StatusFailure extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: Status['details']) {
    super(message);
  }

  toStatus(): Status {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, details: this.details, code: this.code };
  }
}

const keyOf = (r: ResourceType, ns: string | undefined, name: string): string => `${r.group}/${r.plural}/${r.namespaced ? ns ?? '' : ''}/${name}`;

export class MemoryStore {
  #rv = 0;
  #compactedRv = 0;
  readonly #objects = new Map<string, KubeObject>();
  readonly #history: StoreEvent[] = [];
  readonly #listeners = new Set<(e: StoreEvent) => void>();
  readonly #now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.#now = now;
  }

  get revision(): number {
    return this.#rv;
  }

  get compactedRevision(): number {
    return this.#compactedRv;
  }

  get(r: ResourceType, ns: string | undefined, name: string): KubeObject | undefined {
    const o = this.#objects.get(keyOf(r, ns, name));
    return o && structuredClone(o);
  }

  mustGet(r: ResourceType, ns: string | undefined, name: string): KubeObject {
    const o = this.get(r, ns, name);
    if (!o) throw notFound(r, name);
    return o;
  }

  /** All objects of a resource (in one namespace or all), sorted by namespace/name. */
  list(r: ResourceType, ns?: string): KubeObject[] {
    const prefix = `${r.group}/${r.plural}/${r.namespaced && ns ? `${ns}/` : ''}`;
    return [...this.#objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o));
  }

  create(r: ResourceType, input: KubeObject): KubeObject {
    const obj = structuredClone(input);
    obj.metadata ??= {};
    const m = obj.metadata;
    if (!m.name && m.generateName) m.name = `${m.generateName}${randomUUID().slice(0, 5)}`;
    if (!m.name) throw new StatusFailure(422, 'Invalid', `${r.kind} "" is invalid: metadata.name: Required value: name or generateName is required`);
    if (!r.namespaced) delete m.namespace;
    const key = keyOf(r, m.namespace, m.name);
    if (this.#objects.has(key)) {
      throw new StatusFailure(409, 'AlreadyExists', `${r.plural} "${m.name}" already exists`, { name: m.name, group: r.group, kind: r.plural });
    }
    obj.apiVersion = apiVersionOf(r);
    obj.kind = r.kind;
    m.uid = randomUUID();
    m.creationTimestamp = this.#now().toISOString().replace(/\.\d+Z$/, 'Z');
    m.generation = 1;
    delete m.deletionTimestamp;
    return this.#commit(key, r, 'ADDED', obj, undefined);
  }

  /**
   * Replaces an object. A set `resourceVersion` must match (else 409 Conflict). `status` (and a
   * CSR's `approval`) writes only `.status`; a main-resource write keeps the stored `.status` and bumps `generation`
   * when anything but metadata/status changed.
   */
  update(r: ResourceType, input: KubeObject, o: { subresource?: string } = {}): KubeObject {
    const name = input.metadata?.name ?? '';
    const key = keyOf(r, input.metadata?.namespace, name);
    const cur = this.#objects.get(key);
    if (!cur) throw notFound(r, name);
    const rv = input.metadata.resourceVersion;
    if (rv && rv !== cur.metadata.resourceVersion) throw conflict(r, name);
    if (input.metadata.uid && input.metadata.uid !== cur.metadata.uid) throw conflict(r, name);
    const next = structuredClone(cur) as KubeObject & Record<string, unknown>;
    const src = input as KubeObject & Record<string, unknown>;
    if (o.subresource === 'status' || o.subresource === 'approval') {
      next.status = structuredClone(src.status);
    } else {
      for (const k of Object.keys(next)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') delete next[k];
      for (const [k, v] of Object.entries(src)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') next[k] = structuredClone(v);
      const { uid, creationTimestamp, generation, deletionTimestamp, deletionGracePeriodSeconds } = cur.metadata;
      next.metadata = { ...structuredClone(src.metadata), uid, creationTimestamp, generation, deletionTimestamp, deletionGracePeriodSeconds };
      if (deletionTimestamp === undefined) delete next.metadata.deletionTimestamp;
      if (deletionGracePeriodSeconds === undefined) delete next.metadata.deletionGracePeriodSeconds;
      if (JSON.stringify(specOf(cur)) !== JSON.stringify(specOf(next))) next.metadata.generation = (generation ?? 1) + 1;
    }
    // Finalizers removed from an object that is being deleted: it goes now.
    // (A terminating pod goes only after the node's final grace-0 delete.)
    const podWaitsForNode = r.kind === 'Pod' && next.metadata.deletionGracePeriodSeconds !== 0;
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length) && !podWaitsForNode) {
      return this.#remove(key, r, cur);
    }
    return this.#commit(key, r, 'MODIFIED', next, cur);
  }

  /** Marks an object terminating (sets deletionTimestamp) without removing it. */
  markDeleting(r: ResourceType, ns: string | undefined, name: string, graceSeconds: number): KubeObject {
    const key = keyOf(r, ns, name);
    const cur = this.#objects.get(key);
    if (!cur) throw notFound(r, name);
    if (cur.metadata.deletionTimestamp) return structuredClone(cur);
    const next = structuredClone(cur);
    next.metadata.deletionTimestamp = new Date(this.#now().getTime() + graceSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    next.metadata.deletionGracePeriodSeconds = graceSeconds;
    return this.#commit(key, r, 'MODIFIED', next, cur);
  }

  remove(r: ResourceType, ns: string | undefined, name: string, preconditions?: { uid?: string; resourceVersion?: string }): KubeObject {
    const key = keyOf(r, ns, name);
    const cur = this.#objects.get(key);
    if (!cur) throw notFound(r, name);
    if (preconditions?.uid && preconditions.uid !== cur.metadata.uid) throw conflict(r, name);
    if (preconditions?.resourceVersion && preconditions.resourceVersion !== cur.metadata.resourceVersion) throw conflict(r, name);
    return this.#remove(key, r, cur);
  }

  /** Forgets history up to the current revision: watches from an older RV now get 410 Expired. */
  compact(): number {
    this.#compactedRv = this.#rv;
    this.#history.length = 0;
    return this.#compactedRv;
  }

  /** Events after `rv`, or undefined when `rv` is older than the compacted revision. */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.#compactedRv) return undefined;
    return this.#history.filter((e) => e.rv > rv);
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #remove(key: string, r: ResourceType, cur: KubeObject): KubeObject {
    this.#objects.delete(key);
    const gone = structuredClone(cur);
    gone.metadata.resourceVersion = String(++this.#rv);
    this.#emit({ rv: this.#rv, type: 'DELETED', resource: r, object: gone, prev: cur });
    return structuredClone(gone);
  }

  #commit(key: string, r: ResourceType, type: 'ADDED' | 'MODIFIED', obj: KubeObject, prev: KubeObject | undefined): KubeObject {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.#objects.set(key, obj);
    this.#emit({ rv: this.#rv, type, resource: r, object: structuredClone(obj), prev });
    return structuredClone(obj);
  }

  #emit(e: StoreEvent): void {
    this.#history.push(e);
    if (this.#history.length > 10_000) this.#compactedRv = this.#history.shift()?.rv ?? this.#compactedRv;
    for (const l of this.#listeners) l(e);
  }
}

function specOf(o: KubeObject): unknown {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o as KubeObject & { status?: unknown };
  return rest;
}

export function notFound(r: ResourceType, name: string): StatusFailure {
  const res = r.group ? `${r.plural}.${r.group}` : r.plural;
  return new StatusFailure(404, 'NotFound', `${res} "${name}" not found`, { name, group: r.group, kind: r.plural });
}

export function conflict(r: ResourceType, name: string): StatusFailure {
  const res = r.group ? `${r.plural}.${r.group}` : r.plural;
  return new StatusFailure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${res} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: r.group, kind: r.plural },
  );
}
