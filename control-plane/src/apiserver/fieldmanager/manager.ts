/**
 * metadata.managedFields as kube-apiserver keeps them: one entry per manager, operation (Apply
 * or Update), API version (Update only) and subresource, each with the FieldsV1 set it owns.
 *
 * - An Update (create, PUT, non-apply PATCH) gives its manager the fields it added or changed and
 *   takes them from every other manager; fields it removed leave every manager.
 * - An Apply merges the configuration into the live object; the applier then owns exactly the
 *   fields of its configuration. Fields it applied last time and no longer applies are removed
 *   from the object unless another manager owns them too. Changing a field another manager owns
 *   is a conflict (409) unless `force` moves the field to the applier.
 */
import { rfc3339 } from '@nodelet/api';
import type { ManagedFieldsEntry } from '@nodelet/api';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { StatusError } from '../status.js';
import { FieldSet, pathString, type FieldPath } from './fieldset.js';
import { compare, merge, removePaths, toFieldSet, type TypeInfo } from './typed.js';

type Operation = 'Apply' | 'Update';

/** One decoded managedFields entry. */
export interface Managed {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource: string;
  time: string | undefined;
  set: FieldSet;
}

/** The request's side of a write. */
export interface WriteContext {
  types: TypeInfo;
  /** The version the request is written in (`apps/v1`). */
  apiVersion: string;
  /** `status` for a /status write; '' for the main resource. */
  subresource: string;
  /** The main resource does not own `.status` (kinds with a status subresource). */
  statusSubresource: boolean;
  now: number;
}

/** Metadata fields no manager owns (upstream's stripMeta). */
const SYSTEM_METADATA = ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'];

/** What no manager owns (never mutated: the set operations return new sets). */
const UNOWNED = FieldSet.of([['f:apiVersion'], ['f:kind'], ...SYSTEM_METADATA.map((f) => ['f:metadata', `f:${f}`])]);
/** UNOWNED and `.status`, for any write but /status to a kind with a status subresource (one pass, not two). */
const UNOWNED_OR_STATUS = UNOWNED.union(FieldSet.of([['f:status']]));

/**
 * The fields of a write its manager may own: system metadata never; status only through /status.
 * Takes `set` (the caller's own, not read again) and removes the rest from it in place.
 */
function ownable(c: WriteContext, set: FieldSet): FieldSet {
  if (c.subresource !== 'status' && c.statusSubresource) return set.removeRecursive(UNOWNED_OR_STATUS);
  let out = set.removeRecursive(UNOWNED);
  if (c.subresource === 'status') {
    const keep = new FieldSet();
    for (const p of out.paths()) if (p[0] === 'f:status' || (p[0] === 'f:metadata' && (p[1] === 'f:labels' || p[1] === 'f:annotations'))) keep.insert(p);
    out = keep;
  }
  return out;
}

const identity = (m: Pick<Managed, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string =>
  JSON.stringify([m.manager, m.operation, m.operation === 'Apply' ? '' : m.apiVersion, m.subresource]);

/**
 * The entries of `obj`, or undefined when they cannot be read (not a list, an operation other
 * than Apply or Update on an entry that owns fields, malformed FieldsV1). An entry owning
 * nothing (`{}`) reads as an empty one, which is dropped when written back: `[{}]` clears them.
 */
export function decodeManagedFields(obj: ApiObject): Managed[] | undefined {
  const raw: unknown = obj.metadata.managedFields;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return undefined;
  const out: Managed[] = [];
  for (const e of raw as unknown[]) {
    if (!isPlainObject(e)) return undefined;
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch {
      return undefined;
    }
    if (set.empty()) continue;
    if ((e.operation !== 'Apply' && e.operation !== 'Update') || (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1')) return undefined;
    const str = (v: unknown): string => (typeof v === 'string' ? v : '');
    out.push({ manager: str(e.manager), operation: e.operation, apiVersion: str(e.apiVersion), subresource: str(e.subresource), time: str(e.time) || undefined, set });
  }
  return out;
}

/**
 * The entries a write starts from: those the request carries when it carries a readable,
 * non-empty list (a client rewriting managedFields, as kubectl's upgrade from client-side apply
 * does; never through a subresource), else the live object's (none if unreadable), as upstream.
 */
function startingEntries(c: WriteContext, live: ApiObject | undefined, next: ApiObject | undefined): Managed[] {
  const raw = next?.metadata.managedFields;
  const given = !c.subresource && Array.isArray(raw) && raw.length > 0 ? decodeManagedFields(next!) : undefined;
  return given ?? (live ? decodeManagedFields(live) : undefined) ?? [];
}

/** The wire entries: Apply before Update, then by time, manager, version and subresource (upstream's order). */
export function encodeManagedFields(entries: readonly Managed[]): ManagedFieldsEntry[] {
  const sorted = [...entries].sort((p, q) => cmp(p.operation, q.operation) || cmp(p.time ?? '', q.time ?? '') || cmp(p.manager, q.manager) || cmp(p.apiVersion, q.apiVersion) || cmp(p.subresource, q.subresource));
  return sorted.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time ? { time: m.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: m.set.toFieldsV1(),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  })) as ManagedFieldsEntry[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The object without the fields no comparison looks at (managedFields themselves). */
export function content(obj: ApiObject | undefined): Json {
  if (!obj) return {};
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** What `changed` touches of each other manager's fields (the conflicts of an Apply), by manager. */
function takeOwnership(entries: Managed[], selfId: string, changed: FieldSet): Map<Managed, FieldSet> {
  const conflicts = new Map<Managed, FieldSet>();
  for (const e of entries) {
    if (identity(e) === selfId) continue;
    const c = e.set.intersection(changed);
    if (!c.empty()) conflicts.set(e, c);
  }
  return conflicts;
}

/** The entries without what `take` takes from each and without `removed`; emptied entries go. */
function withoutOwnership(entries: Managed[], selfId: string, take: Map<Managed, FieldSet>, removed: FieldSet): Managed[] {
  return entries
    .map((e) => {
      if (identity(e) === selfId) return e;
      let set = e.set;
      const c = take.get(e);
      if (c) set = set.difference(c);
      if (!removed.empty()) set = set.difference(removed);
      return set === e.set ? e : { ...e, set };
    })
    .filter((e) => !e.set.empty());
}

/**
 * The managedFields after an Update by `manager` from `live` (undefined on create) to `next`.
 * Entries the request itself carries (a client rewriting managedFields, as kubectl's upgrade
 * from client-side apply does) replace the live ones, as upstream honours them.
 */
export function updateManagedFields(c: WriteContext, live: ApiObject | undefined, next: ApiObject, manager: string): ManagedFieldsEntry[] {
  const entries = startingEntries(c, live, next);
  const diff = compare(c.types, content(live), content(next));
  // A create has nothing modified or removed (the sets are this call's own, so they are not copied for nothing).
  const changed = ownable(c, diff.modified.empty() ? diff.added : diff.added.union(diff.modified));
  const removed = ownable(c, diff.removed);
  const self: Managed = { manager, operation: 'Update', apiVersion: c.apiVersion, subresource: c.subresource, time: undefined, set: new FieldSet() };
  const selfId = identity(self);
  const out = withoutOwnership(entries, selfId, takeOwnership(entries, selfId, changed), removed);
  const i = out.findIndex((e) => identity(e) === selfId);
  const prev = i >= 0 ? out[i]! : undefined;
  const set = prev ? prev.set.difference(removed).union(changed) : changed;
  // Any field this write set (even one it owned already) dates the entry; otherwise it keeps its time.
  const entry: Managed = { ...self, set, time: prev && changed.empty() ? prev.time : rfc3339(c.now) };
  if (i >= 0) out.splice(i, 1);
  if (!set.empty()) out.push(entry);
  return encodeManagedFields(capUpdateManagers(out));
}

/** Upstream's DefaultMaxUpdateManagers and the manager its oldest Update entries merge into. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT = 'ancient-changes';

/**
 * At most MAX_UPDATE_MANAGERS Update entries: the oldest merge into one `ancient-changes` entry
 * per API version (keeping the newest time), as upstream caps them so that many one-off writers
 * (scripts with their own User-Agent) do not grow every object without bound.
 */
function capUpdateManagers(entries: Managed[]): Managed[] {
  const updates = entries.filter((e) => e.operation === 'Update');
  if (updates.length <= MAX_UPDATE_MANAGERS) return entries;
  const oldest = [...updates].sort((p, q) => cmp(p.time ?? '', q.time ?? '') || cmp(identity(p), identity(q)));
  const out = new Set(entries);
  const buckets = new Map<string, Managed>();
  for (const e of out) if (e.operation === 'Update' && e.manager === ANCIENT && !e.subresource) buckets.set(e.apiVersion, e);
  let count = updates.length;
  for (const e of oldest) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    if (e.manager === ANCIENT && !e.subresource) continue;
    const prev = buckets.get(e.apiVersion);
    const merged: Managed = { manager: ANCIENT, operation: 'Update', apiVersion: e.apiVersion, subresource: '', time: prev && cmp(prev.time ?? '', e.time ?? '') > 0 ? prev.time : e.time, set: prev ? prev.set.union(e.set) : e.set };
    out.delete(e);
    if (prev) {
      out.delete(prev);
      count--;
    }
    out.add(merged);
    buckets.set(e.apiVersion, merged);
  }
  return [...out];
}

/**
 * Server-side apply of `config` by `manager` onto `live` (undefined when it creates the object):
 * the merged object, its managedFields set. Throws 409 on conflicts unless `force`.
 */
export function applyManagedFields(c: WriteContext, live: ApiObject | undefined, config: ApiObject, manager: string, force: boolean): ApiObject {
  const entries = startingEntries(c, live, undefined);
  const self: Managed = { manager, operation: 'Apply', apiVersion: c.apiVersion, subresource: c.subresource, time: undefined, set: new FieldSet() };
  const selfId = identity(self);
  const prev = entries.find((e) => identity(e) === selfId);
  const { managedFields: _m, ...configMeta } = config.metadata;
  const applied = ownable(c, toFieldSet(c.types, { ...config, metadata: configMeta }));
  const merged = merge(c.types, content(live), { ...config, metadata: configMeta }) as ApiObject;
  if (prev) {
    const others = entries.filter((e) => identity(e) !== selfId).reduce((u, e) => u.union(e.set), new FieldSet());
    const gone = [...prev.set.difference(applied).paths()].filter((p) => !others.hasPrefix(p) && !applied.hasPrefix(p));
    removePaths(c.types, merged, gone);
  }
  const diff = compare(c.types, content(live), merged);
  // Read before ownable takes diff.removed.
  const unchanged = diff.added.empty() && diff.modified.empty() && diff.removed.empty();
  const changed = ownable(c, diff.added.union(diff.modified));
  const removed = ownable(c, diff.removed);
  const conflicts = takeOwnership(entries, selfId, changed);
  if (conflicts.size && !force) throw conflictError(conflicts);
  const out = withoutOwnership(entries, selfId, conflicts, removed).filter((e) => identity(e) !== selfId);
  const same = !!prev && prev.set.equals(applied) && unchanged;
  if (!applied.empty()) out.push({ ...self, set: applied, time: same ? prev.time : rfc3339(c.now) });
  merged.metadata = { ...merged.metadata, managedFields: encodeManagedFields(out) };
  return merged;
}

/** How upstream names a manager in a conflict: `"kubectl"`, `"m" with subresource "scale" using apps/v1`. */
function managerName(e: Managed): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion}`;
  return s;
}

/** An Apply's conflicts: the 409 and, for the client-side apply upgrade, the fields by manager. */
export class ApplyConflictError extends StatusError {
  constructor(
    message: string,
    causes: Array<{ reason: string; message: string; field: string }>,
    readonly conflicts: ReadonlyMap<Managed, FieldSet>,
  ) {
    super(409, 'Conflict', message, { causes });
  }
}

/** 409 Conflict with upstream's message and one FieldManagerConflict cause per field. */
export function conflictError(conflicts: ReadonlyMap<Managed, FieldSet>): ApplyConflictError {
  const all: Array<{ who: string; path: FieldPath }> = [];
  for (const [e, set] of conflicts) for (const path of set.paths()) all.push({ who: managerName(e), path });
  const causes = all.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.who}`, field: pathString(c.path) }));
  let message: string;
  if (all.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${all[0]!.who}: ${pathString(all[0]!.path)}`;
  } else {
    const byWho = new Map<string, string[]>();
    for (const c of all) byWho.set(c.who, [...(byWho.get(c.who) ?? []), pathString(c.path)]);
    const lines = [...byWho.keys()].sort().flatMap((who) => [`conflict with ${who}:`, ...byWho.get(who)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${all.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApplyConflictError(message, causes, conflicts);
}

/**
 * The manager of a write: `fieldManager`, else the User-Agent up to its first `/`, printable
 * characters only, at most 128 bytes (upstream's prefixFromUserAgent).
 */
export function managerOf(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0] ?? '') {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}
