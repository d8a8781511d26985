/**
 * The served form of a CustomResourceDefinition: one {@link ResourceDef} per served version, with
 * a strategy from the version's structural schema (prune, default, validate), a Table printer
 * from its additionalPrinterColumns, and the status/scale subresources it declares. The catalog
 * (../catalog.ts) serves them once the CRD is Established (controller.ts).
 */
import { apiVersionOf, type ResourceDef, type Strategy, type SubresourceDef, type TableColumn, type TablePrinter } from '../resource.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { age, humanDuration, NAME_COLUMN } from '../table/format.js';
import { applyDefaults, prune, validateValue, type StructuralSchema } from './schema.js';
import type { CrdSpec, CrdVersion } from './types.js';

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** Reads a printer column's / scale path's simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`). */
export function readJsonPath(obj: unknown, path: string): unknown {
  const p = path.replace(/^\{?\.?/, '').replace(/\}$/, '');
  let cur: unknown = obj;
  for (const part of p.split('.').filter(Boolean)) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1]) cur = isPlainObject(cur) ? cur[m[1]] : undefined;
    for (const idx of m[2]!.match(/\d+/g) ?? []) cur = Array.isArray(cur) ? cur[Number(idx)] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Sets a field at a dotted path (`.spec.replicas`), creating the objects on the way. */
export function writeJsonPath(obj: Json, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur: Json = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Json;
  }
  cur[parts[parts.length - 1]!] = value;
}

function printerOf(v: CrdVersion): TablePrinter {
  const specified = v.additionalPrinterColumns ?? [];
  // Upstream: without printer columns a custom resource lists Name and Age.
  const cols = specified.length ? specified : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: '' }];
  const columns: TableColumn[] = [
    NAME_COLUMN,
    ...cols.map((c) => ({ name: c.name, type: c.type as TableColumn['type'], ...(c.format ? { format: c.format } : {}), description: c.description ?? '', priority: c.priority ?? 0 })),
  ];
  return {
    columns,
    cells: (o, now) => [
      o.metadata.name,
      ...cols.map((c) => {
        if (c.jsonPath === '.metadata.creationTimestamp' && c.type === 'date') return age(o, now);
        const v = readJsonPath(o, c.jsonPath);
        if (v === undefined || v === null) return null;
        if (c.type === 'date' && typeof v === 'string' && !Number.isNaN(Date.parse(v))) return humanDuration(now - Date.parse(v));
        return typeof v === 'object' ? JSON.stringify(v) : v;
      }),
    ],
  };
}

/** The strategy of one version: prune → default → validate, and the status split when declared. */
function strategyOf(schema: StructuralSchema | undefined, hasStatus: boolean): Strategy {
  const clean = (obj: ApiObject): void => {
    prune(schema, obj, true);
    applyDefaults(schema, obj);
  };
  return {
    prepareForCreate(obj) {
      if (hasStatus) delete obj.status;
    },
    defaults: clean,
    validate(obj) {
      if (!schema) return [];
      const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj;
      const root: StructuralSchema = { ...schema, properties: { ...schema.properties } };
      delete root.properties!.metadata;
      delete root.properties!.apiVersion;
      delete root.properties!.kind;
      return validateValue(root, rest, '');
    },
  };
}

/**
 * Kube's version priority (discovery lists versions in it; the first is preferred): GA before
 * beta before alpha, higher numbers first, then names that are not kube versions, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    return m ? [m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3, Number(m[1]), m[3] ? Number(m[3]) : 0] : undefined;
  };
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) return ra ? -1 : rb ? 1 : a.localeCompare(b);
  return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
}

/** Upstream's warning for a deprecated version without its own: names the preferred version that is not deprecated. */
function defaultDeprecationWarning(spec: CrdSpec, version: string): string {
  const msg = `${spec.group}/${version} ${spec.names.kind} is deprecated`;
  const better = spec.versions.filter((v) => v.served && !v.deprecated).map((v) => v.name).sort(compareKubeVersions)[0];
  return better ? `${msg}; use ${spec.group}/${better} ${spec.names.kind}` : msg;
}

/** One ResourceDef per served version of `spec` (storage is shared: every version keys into `<group>/<plural>`). */
export function customResourceDefs(spec: CrdSpec): ResourceDef[] {
  const storageVersion = spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]!.name;
  return spec.versions
    .filter((v) => v.served)
    .sort((a, b) => compareKubeVersions(a.name, b.name))
    .map((v) => {
      const subs: SubresourceDef[] = [];
      const hasStatus = !!v.subresources?.status;
      if (hasStatus) subs.push({ name: 'status', verbs: ['get', 'patch', 'update'] });
      const scale = v.subresources?.scale;
      if (scale) subs.push({ name: 'scale', kind: SCALE_KIND, verbs: ['get', 'patch', 'update'] });
      const def: ResourceDef = {
        group: spec.group,
        version: v.name,
        kind: spec.names.kind,
        plural: spec.names.plural,
        singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
        namespaced: spec.scope === 'Namespaced',
        ...(spec.names.shortNames?.length ? { shortNames: spec.names.shortNames } : {}),
        ...(spec.names.categories?.length ? { categories: spec.names.categories } : {}),
        storagePrefix: `${spec.group}/${spec.names.plural}`,
        statusSubresource: hasStatus,
        subresources: subs,
        selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, '')),
        table: printerOf(v),
        strategy: strategyOf(v.schema?.openAPIV3Schema, hasStatus),
        custom: {
          storageApiVersion: apiVersionOf({ group: spec.group, version: storageVersion }),
          schema: v.schema?.openAPIV3Schema,
          ...(scale ? { scale } : {}),
          listKind: spec.names.listKind ?? `${spec.names.kind}List`,
          ...(v.deprecated ? { deprecationWarning: v.deprecationWarning ?? defaultDeprecationWarning(spec, v.name) } : {}),
        },
      };
      return def;
    });
}

/**
 * A stored custom object as version `def` serves it: with conversion strategy None only the
 * apiVersion changes; then the version's pruning and defaults apply, as upstream does on read.
 */
export function asServedVersion(def: ResourceDef, obj: ApiObject): ApiObject {
  if (!def.custom) return obj;
  obj.apiVersion = apiVersionOf(def);
  prune(def.custom.schema, obj, true);
  applyDefaults(def.custom.schema, obj);
  return obj;
}

/** The form written to the store: the storage version's apiVersion (conversion None). */
export function asStorageVersion(def: ResourceDef, obj: ApiObject): ApiObject {
  return def.custom ? { ...obj, apiVersion: def.custom.storageApiVersion } : obj;
}

export type { Json };
