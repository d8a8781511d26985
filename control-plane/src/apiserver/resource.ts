/**
 * The declarative resource table: one {@link ResourceDef} per served resource. Adding a resource
 * is one entry (see resources-core.ts / resources-apps.ts): discovery, OpenAPI, routing, storage
 * keys, Table output and field selectors all come from it.
 */
import type { FieldError } from '@nodelet/api';
import type { ApiObject } from './object.js';
import type { StructuralSchema } from './apiextensions/schema.js';
import type { CrdScale } from './apiextensions/types.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0 = default columns, 1 = `-o wide`. */
  priority: number;
}

export interface TablePrinter {
  columns: readonly TableColumn[];
  /** One cell per column, formatted as kubectl prints them. `now` is epoch ms. */
  cells(obj: ApiObject, now: number): unknown[];
}

/** Per-kind behaviour hooks, mirroring kube-apiserver's rest.RESTCreateStrategy/RESTUpdateStrategy. */
export interface Strategy {
  /** Fills defaults in place (create, update, patch). */
  defaults?(obj: ApiObject): void;
  /** Resets server-owned fields on create (e.g. status). */
  prepareForCreate?(obj: ApiObject): void;
  /** Carries server-owned fields over from the stored object on update (e.g. a Service's clusterIP). */
  prepareForUpdate?(obj: ApiObject, old: ApiObject): void;
  /** Carries fields over on a `/status` (or CSR `/approval`) update: what that subresource may not change. */
  prepareForSubresourceUpdate?(subresource: string, obj: ApiObject, old: ApiObject): void;
  /** Field errors; `old` is set on update, `subresource` on a subresource update (e.g. pods/ephemeralcontainers). */
  validate?(obj: ApiObject, old?: ApiObject, subresource?: string): FieldError[];
  /** Warning header values (`299 - "…"`) of a create or update of the main resource (upstream's WarningsOnCreate/WarningsOnUpdate). */
  warnings?(obj: ApiObject, old?: ApiObject): string[];
}

export interface SubresourceDef {
  name: string;
  /** Kind returned (e.g. scale → autoscaling/v1 Scale); defaults to the parent kind. */
  kind?: { group: string; version: string; kind: string };
  verbs: readonly string[];
}

export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: readonly string[];
  categories?: readonly string[];
  /** The etcd key segment (kube's SpecialDefaultResourcePrefixes: nodes → minions, …). */
  storagePrefix?: string;
  /** Has a spec/status split: the main resource ignores `.status`, `/status` changes only it, generation tracks spec. */
  statusSubresource: boolean;
  subresources: readonly SubresourceDef[];
  /** Extra field-selector fields beyond metadata.name/metadata.namespace, read from the object. */
  selectableFields?: readonly string[];
  table?: TablePrinter;
  strategy: Strategy;
  /** Verbs served (default: all of RESOURCE_VERBS). */
  verbs?: readonly string[];
  /**
   * A DELETE that removes the object at once answers with the object, as kube's
   * `ReturnDeletedObject` stores do (pods, services, namespaces, …); otherwise with a Success
   * Status naming it. A delete that only marks the object (grace, finalizers) answers with it.
   */
  returnDeletedObject?: boolean;
  /** Never stored: a create computes a reply (e.g. SelfSubjectAccessReview); see handlers/dispatch.ts. */
  ephemeral?: boolean;
  /**
   * The object as stored is another version's form (events.k8s.io/v1 Events are stored as core
   * v1 Events, one storage for both groups): `fromStored` on every read, `toStored` on every write.
   */
  storageCodec?: { fromStored(obj: ApiObject): ApiObject; toStored(obj: ApiObject): ApiObject };
  /** How metadata.name is validated (default a DNS-1123 subdomain; RBAC objects allow any path segment). */
  nameValidation?: 'subdomain' | 'label' | 'pathSegment';
  /** Set on a version of a CustomResourceDefinition (apiextensions/custom-defs.ts). */
  custom?: CustomResourceInfo;
}

/** What serving a custom resource version needs beyond the generic fields. */
export interface CustomResourceInfo {
  /** The apiVersion objects are stored under (conversion strategy None rewrites only this). */
  storageApiVersion: string;
  /** The version's openAPIV3Schema (structural). */
  schema?: StructuralSchema;
  /** The version's scale subresource paths, when it has one. */
  scale?: CrdScale;
  listKind: string;
  /** Sent as a `Warning` with every request to this version when it is deprecated. */
  deprecationWarning?: string;
}

export const RESOURCE_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** Storage key of an object: `/registry/<prefix>/<ns>/<name>` or `/registry/<prefix>/<name>`. */
export function storageKey(def: ResourceDef, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${storagePrefix(def, namespace)}${name}` : `${storagePrefix(def)}${name}`;
}

/** Key prefix of every object of a resource (in one namespace when given), ending in '/'. */
export function storagePrefix(def: ResourceDef, namespace?: string): string {
  const base = `/registry/${def.storagePrefix ?? def.plural}/`;
  return def.namespaced && namespace ? `${base}${namespace}/` : base;
}
