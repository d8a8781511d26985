/**
 * `/openapi/v3`: an index of group-version documents, and per group-version a document with the
 * REST paths of its resources (each operation tagged `x-kubernetes-group-version-kind` and
 * `x-kubernetes-action`, patch operations listing `fieldValidation`) and, under
 * `components.schemas`, the schemas of its kinds and everything they refer to, from
 * `@nodelet/api`'s schema modules — the same definitions field validation uses.
 *
 * kubectl reads them for `kubectl explain`, to compute client-side apply patches (list merge keys
 * and patch strategies) and to see that the server validates fields itself (`--validate=strict`).
 * The documents never change while the server runs, so each is built once; the index's hashes
 * let clients cache them.
 */
import { createHash } from 'node:crypto';
import { API_SCHEMAS, REF_PREFIX, schemaClosure, schemaNameOfKind, type JsonSchema } from '@nodelet/api';
import { groupVersions, RESOURCE_DEFS } from './resources.js';
import { customSchemaName, customSchemas } from './apiextensions/openapi.js';
import { RESOURCE_VERBS, type ResourceDef, type SubresourceDef } from './resource.js';

type Json = Record<string, unknown>;
type Gvk = { group: string; version: string; kind: string };

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
const SERVER_VERSION = 'v1.32.0-nodelet';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

const query = (name: string, description: string, type: 'string' | 'integer' | 'boolean' = 'string'): Json => ({ name, in: 'query', description, schema: { type, uniqueItems: true } });
const pathParam = (name: string, description: string): Json => ({ name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [
  query('dryRun', 'When `All`, the request is checked and admitted but nothing is stored.'),
  query('fieldManager', 'Name of the actor making the change (recorded in managedFields).'),
  query('fieldValidation', 'What to do with fields the schema does not declare: `Ignore`, `Warn` (default) or `Strict` (reject the request).'),
];
const LIST_PARAMS = [
  query('labelSelector', 'Only objects whose labels match.'),
  query('fieldSelector', 'Only objects whose fields match.'),
  query('limit', 'Most objects per page.', 'integer'),
  query('continue', 'Token of the next page.'),
  query('resourceVersion', 'Read at or after this version; watch changes after it.'),
  query('timeoutSeconds', 'End a watch after this long.', 'integer'),
  query('watch', 'Stream changes instead of listing.', 'boolean'),
];

const refSchema = (name: string): Json => ({ $ref: REF_PREFIX + name });
const jsonBody = (name: string): Json => ({ content: { 'application/json': { schema: refSchema(name) }, 'application/yaml': { schema: refSchema(name) } }, required: true });
const reply = (codes: string[], name: string): Json =>
  Object.fromEntries(codes.map((c) => [c, { description: c === '201' ? 'Created' : c === '202' ? 'Accepted' : 'OK', content: { 'application/json': { schema: refSchema(name) } } }]));

function operation(action: string, id: string, gvk: Gvk, o: { params?: Json[]; body?: Json; responses: Json }): Json {
  return {
    operationId: id,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    ...(o.params?.length ? { parameters: o.params } : {}),
    ...(o.body ? { requestBody: o.body } : {}),
    responses: o.responses,
  };
}

/** The kind a subresource takes and returns (scale → autoscaling/v1 Scale), the parent's otherwise. */
function subresourceGvk(def: ResourceDef, sub: SubresourceDef): Gvk {
  return sub.kind ?? { group: def.group, version: def.version, kind: def.kind };
}

/** Paths of one resource: its collection(s), its objects and their subresources. */
function resourcePaths(def: ResourceDef, listName: string | undefined): Record<string, Json> {
  const gvk: Gvk = { group: def.group, version: def.version, kind: def.kind };
  const schema = schemaNameOf(def);
  if (!schema) return {};
  const base = `/${gvPath(def.group, def.version)}`;
  const scope = def.namespaced ? 'Namespaced' : '';
  const nsParams = def.namespaced ? [pathParam('namespace', 'Namespace of the objects.')] : [];
  const collection = `${base}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.plural}`;
  const verbs = new Set<string>(def.verbs ?? RESOURCE_VERBS);
  const paths: Record<string, Json> = {};
  const col: Json = { parameters: nsParams };
  if (verbs.has('list') && listName) col.get = operation('list', `list${scope}${def.kind}`, gvk, { params: LIST_PARAMS, responses: reply(['200'], listName) });
  if (verbs.has('create')) col.post = operation('post', `create${scope}${def.kind}`, gvk, { params: WRITE_PARAMS, body: jsonBody(schema), responses: reply(['200', '201', '202'], schema) });
  if (verbs.has('deletecollection')) col.delete = operation('deletecollection', `deleteCollection${scope}${def.kind}`, gvk, { params: [...LIST_PARAMS.slice(0, 4), query('gracePeriodSeconds', 'Grace period of each delete.', 'integer')], responses: reply(['200'], 'io.k8s.apimachinery.pkg.apis.meta.v1.Status') });
  paths[collection] = col;
  if (def.namespaced && verbs.has('list') && listName) {
    paths[`${base}/${def.plural}`] = { get: operation('list', `list${def.kind}ForAllNamespaces`, gvk, { params: LIST_PARAMS, responses: reply(['200'], listName) }) };
  }
  if (def.ephemeral) return paths;
  const item = `${collection}/{name}`;
  const itemParams = [pathParam('name', 'Name of the object.'), ...nsParams];
  paths[item] = {
    parameters: itemParams,
    get: operation('get', `read${scope}${def.kind}`, gvk, { responses: reply(['200'], schema) }),
    put: operation('put', `replace${scope}${def.kind}`, gvk, { params: WRITE_PARAMS, body: jsonBody(schema), responses: reply(['200', '201'], schema) }),
    patch: operation('patch', `patch${scope}${def.kind}`, gvk, {
      params: [...WRITE_PARAMS, query('force', 'Server-side apply: take over fields other managers own.', 'boolean')],
      body: { content: Object.fromEntries(PATCH_TYPES.map((t) => [t, { schema: refSchema('io.k8s.apimachinery.pkg.apis.meta.v1.Patch') }])), required: true },
      responses: reply(['200', '201'], schema),
    }),
    delete: operation('delete', `delete${scope}${def.kind}`, gvk, {
      params: [query('gracePeriodSeconds', 'Seconds before the object is removed.', 'integer'), query('propagationPolicy', '`Orphan`, `Background` or `Foreground`.'), query('dryRun', 'When `All`, nothing is deleted.')],
      responses: reply(['200', '202'], schema),
    }),
  };
  for (const sub of def.subresources) {
    const subGvk = subresourceGvk(def, sub);
    const subSchema = sub.kind ? schemaNameOfKind(subGvk.group, subGvk.version, subGvk.kind) : schema;
    const id = `${scope}${def.kind}${sub.name[0]!.toUpperCase()}${sub.name.slice(1)}`;
    const p: Json = { parameters: itemParams };
    if (sub.verbs.includes('get') && subSchema) p.get = operation('get', `read${id}`, subGvk, { responses: reply(['200'], subSchema) });
    if (sub.verbs.includes('update') && subSchema) p.put = operation('put', `replace${id}`, subGvk, { params: WRITE_PARAMS, body: jsonBody(subSchema), responses: reply(['200', '201'], subSchema) });
    if (sub.verbs.includes('patch') && subSchema) {
      p.patch = operation('patch', `patch${id}`, subGvk, {
        params: [...WRITE_PARAMS, query('force', 'Server-side apply: take over fields other managers own.', 'boolean')],
        body: { content: Object.fromEntries(PATCH_TYPES.map((t) => [t, { schema: refSchema('io.k8s.apimachinery.pkg.apis.meta.v1.Patch') }])), required: true },
        responses: reply(['200', '201'], subSchema),
      });
    }
    if (sub.verbs.includes('create') && subSchema) p.post = operation('post', `create${id}`, subGvk, { params: WRITE_PARAMS, body: jsonBody(subSchema), responses: reply(['200', '201', '202'], subSchema) });
    if (Object.keys(p).length > 1) paths[`${item}/${sub.name}`] = p;
  }
  return paths;
}

/** `<Kind>List`: the list form of a kind, derived from its definition. */
function listSchema(def: ResourceDef, itemSchema: string): JsonSchema {
  return {
    type: 'object',
    description: `A list of ${def.kind} objects.`,
    properties: {
      apiVersion: { type: 'string', description: 'The schema version of this representation of the list.' },
      items: { type: 'array', description: `The ${def.plural}.`, items: { allOf: [{ $ref: REF_PREFIX + itemSchema }], default: {} } },
      kind: { type: 'string', description: 'The type of the list.' },
      metadata: { allOf: [{ $ref: REF_PREFIX + 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta' }], default: {}, description: 'Standard list metadata.' },
    },
    required: ['items'],
    'x-kubernetes-group-version-kind': [{ group: def.group, kind: `${def.kind}List`, version: def.version }],
  };
}

/** The definition name of a served kind: the API schemas' for built-ins, one derived from the group for custom ones. */
function schemaNameOf(def: ResourceDef): string | undefined {
  return def.custom ? customSchemaName(def) : schemaNameOfKind(def.group, def.version, def.kind);
}

/**
 * What a group-version's document is built from, as a cache key: built-in documents never
 * change; one with custom resources changes with their CRDs.
 */
function cacheKey(group: string, version: string, defs: readonly ResourceDef[]): string {
  const custom = defs.filter((d) => d.custom && d.group === group && d.version === version);
  return `${group}/${version}${custom.length ? JSON.stringify(custom.map((d) => [d.kind, d.plural, d.namespaced, d.subresources, d.custom])) : ''}`;
}

const docCache = new Map<string, Json | null>();

/**
 * The document of one group-version of `defs` (default: the built-in table), or undefined when
 * the server does not serve it.
 */
export function openApiDocument(group: string, version: string, defs: readonly ResourceDef[] = RESOURCE_DEFS): Json | undefined {
  const key = cacheKey(group, version, defs);
  if (docCache.has(key)) return docCache.get(key) ?? undefined;
  // Documents of CRDs since changed or deleted are dropped, keeping the cache bounded.
  if (key.length > group.length + version.length + 1) for (const k of docCache.keys()) if (k.startsWith(`${group}/${version}[`)) docCache.delete(k);
  // A group-version without a described kind (metrics.k8s.io) has no document.
  const gv = groupVersions(defs).find((g) => g.group === group && g.version === version && g.resources.some((d) => schemaNameOf(d)));
  if (!gv) {
    if (!defs.some((d) => d.custom)) docCache.set(key, null);
    return undefined;
  }
  const paths: Record<string, Json> = {};
  const lists: Record<string, JsonSchema> = {};
  const roots = new Set<string>(['io.k8s.apimachinery.pkg.apis.meta.v1.Patch', 'io.k8s.apimachinery.pkg.apis.meta.v1.Status']);
  const custom = customSchemas(gv.resources);
  if (Object.keys(custom).length) roots.add('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  for (const def of gv.resources) {
    const schema = schemaNameOf(def);
    if (!schema) continue;
    if (!def.custom) roots.add(schema);
    let listName: string | undefined;
    if (!def.ephemeral) {
      listName = `${schema}List`;
      lists[listName] = listSchema(def, schema);
    }
    for (const sub of def.subresources) {
      const s = sub.kind ? schemaNameOfKind(sub.kind.group, sub.kind.version, sub.kind.kind) : undefined;
      if (s) roots.add(s);
    }
    Object.assign(paths, resourcePaths(def, listName));
  }
  const schemas: Record<string, JsonSchema> = { ...lists, ...custom };
  for (const name of schemaClosure([...roots, 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta'])) schemas[name] = API_SCHEMAS[name]!;
  const doc: Json = {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION },
    paths,
    components: { schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1))) },
  };
  docCache.set(key, doc);
  return doc;
}

/** `/openapi/v3`: every group-version's document URL, with a content hash for caching. */
export function openApiIndex(defs: readonly ResourceDef[] = RESOURCE_DEFS): Json {
  const paths: Record<string, unknown> = {};
  for (const gv of groupVersions(defs)) {
    if (!openApiDocument(gv.group, gv.version, defs)) continue;
    const p = gvPath(gv.group, gv.version);
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${documentHash(gv.group, gv.version, defs)}` };
  }
  return { paths };
}

const hashCache = new WeakMap<Json, string>();
function documentHash(group: string, version: string, defs: readonly ResourceDef[]): string {
  const doc = openApiDocument(group, version, defs)!;
  let h = hashCache.get(doc);
  if (!h) hashCache.set(doc, (h = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase()));
  return h;
}
