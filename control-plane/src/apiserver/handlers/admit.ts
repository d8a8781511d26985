/**
 * The create and update admission pipeline shared by POST, PUT, PATCH and server-side apply:
 * type/namespace checks, system metadata, strategy defaults, status split, generation, and
 * validation (422). Nothing is written here; callers persist the returned object.
 */
import { dropNonResizeUpdates } from '../strategies/pod-resize.js';
import { rfc3339, validateObjectMeta, type FieldError } from '@nodelet/api';
import type { ServerContext } from '../context.js';
import { findMirrored } from '../mirror.js';
import { isPlainObject, jsonEqual, newUid, randomNameSuffix, type ApiObject, type Json } from '../object.js';
import { apiVersionOf, type ResourceDef } from '../resource.js';
import { badRequest, forbidden, invalid, StatusError } from '../status.js';

/** Turns a decoded body into a typed object for `def`, defaulting apiVersion/kind (client-node omits them). */
export function asObject(def: ResourceDef, body: Json): ApiObject {
  const apiVersion = body.apiVersion ?? apiVersionOf(def);
  const kind = body.kind ?? def.kind;
  if (apiVersion !== apiVersionOf(def) || kind !== def.kind) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) and kind (${String(kind)}) do not match the request path (${apiVersionOf(def)}, ${def.kind})`);
  }
  if (body.metadata !== undefined && !isPlainObject(body.metadata)) throw badRequest('metadata must be an object');
  return { ...body, apiVersion, kind, metadata: (body.metadata ?? {}) as ApiObject['metadata'] };
}

/** Namespace in the body must match the URL's; cluster-scoped objects carry none. */
export function reconcileNamespace(def: ResourceDef, obj: ApiObject, urlNamespace: string | undefined): void {
  if (!def.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  const ns = obj.metadata.namespace;
  if (ns && urlNamespace && ns !== urlNamespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  obj.metadata.namespace = ns || urlNamespace;
}

function toCauses(errs: FieldError[]): Array<{ reason: string; message: string; field: string }> {
  return errs.map((e) => ({ reason: e.type, message: e.message, field: e.field }));
}

/** The strategy's and the metadata's field errors as a 422 Invalid (admission re-checks what a mutating plugin changed). */
export function validateOrThrow(def: ResourceDef, obj: ApiObject, old?: ApiObject, subresource?: string): void {
  const errs = [
    ...validateObjectMeta(obj.metadata, {
      namespaced: def.namespaced,
      nameIsLabel: def.nameValidation === 'label' || def.kind === 'Namespace' || def.kind === 'Service',
      nameIsPathSegment: def.nameValidation === 'pathSegment',
    }),
    ...(def.strategy.validate?.(obj, old, subresource) ?? []),
  ];
  if (errs.length) throw invalid(def.kind, def.group, obj.metadata.name ?? obj.metadata.generateName ?? '', toCauses(errs));
}

/** Defaults and validates an object a mutating admission webhook changed (upstream validates after mutating admission). */
export function revalidateAdmitted(def: ResourceDef, obj: ApiObject, old?: ApiObject): void {
  def.strategy.defaults?.(obj);
  validateOrThrow(def, obj, old);
}

/** Rejects creates in a missing (404) or terminating (403) namespace (NamespaceLifecycle). */
export async function checkNamespace(ctx: ServerContext, def: ResourceDef, namespace: string | undefined): Promise<void> {
  if (!def.namespaced || !namespace) return;
  const ns = await findMirrored(ctx, ctx.resource('', 'v1', 'namespaces')!, undefined, namespace);
  if (!ns) throw new StatusError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
  if (ns.metadata.deletionTimestamp) {
    throw forbidden(`${def.plural} "${'<new>'}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`);
  }
}

export function admitCreate(ctx: ServerContext, def: ResourceDef, obj: ApiObject): ApiObject {
  const meta = obj.metadata;
  if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomNameSuffix()}`;
  meta.uid = newUid();
  meta.creationTimestamp = rfc3339(ctx.now());
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.selfLink;
  // Custom objects always count generations (upstream's CR strategy), with or without /status.
  if (def.statusSubresource || def.custom) meta.generation = 1;
  else delete meta.generation;
  def.strategy.prepareForCreate?.(obj);
  def.strategy.defaults?.(obj);
  validateOrThrow(def, obj);
  return obj;
}

function specOf(obj: ApiObject): Json {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/**
 * Subresources that write one part of the object: `.status`, a CSR's Approved/Denied conditions
 * (`approval`), a pod's `spec.ephemeralContainers` (`ephemeralcontainers`), its containers'
 * resources (`resize`).
 */
export type StatusLikeSubresource = 'status' | 'approval' | 'ephemeralcontainers' | 'resize';

/**
 * Admits `next` as the successor of `old` for the main resource (`subresource` undefined) or
 * `/status`. Identity and system fields always come from `old`.
 */
export function admitUpdate(def: ResourceDef, next: ApiObject, old: ApiObject, subresource?: StatusLikeSubresource): ApiObject {
  let obj: ApiObject;
  if (subresource === 'ephemeralcontainers') {
    // Only the list changes: metadata, the rest of the spec and the status are the stored ones (kube's dropNonEphemeralContainerUpdates).
    const spec = { ...(old.spec as Json) };
    const list = isPlainObject(next.spec) ? (next.spec as Json).ephemeralContainers : undefined;
    if (list === undefined) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = list;
    obj = { ...old, spec, metadata: { ...old.metadata } };
  } else if (subresource === 'resize') {
    // Only container resources and resize policies change (kube's dropNonResizeUpdates).
    obj = { ...old, spec: dropNonResizeUpdates(next.spec, (old.spec ?? {}) as Json), metadata: { ...old.metadata } };
  } else if (subresource) {
    obj = { ...old, status: next.status, metadata: { ...old.metadata } };
    // Labels and annotations may change through /status (kubelet does not rely on it, others do).
    if (next.metadata.labels) obj.metadata.labels = next.metadata.labels;
    if (next.metadata.annotations) obj.metadata.annotations = next.metadata.annotations;
  } else {
    obj = { ...next, metadata: { ...next.metadata } };
    if (def.statusSubresource) {
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    }
  }
  const meta = obj.metadata;
  meta.name = old.metadata.name;
  meta.namespace = old.metadata.namespace;
  meta.uid = old.metadata.uid;
  meta.creationTimestamp = old.metadata.creationTimestamp;
  meta.resourceVersion = old.metadata.resourceVersion;
  if (old.metadata.deletionTimestamp) {
    meta.deletionTimestamp = old.metadata.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
  } else {
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
  }
  if (old.metadata.generateName) meta.generateName = old.metadata.generateName;
  delete meta.selfLink;
  if (!subresource) def.strategy.prepareForUpdate?.(obj, old);
  else def.strategy.prepareForSubresourceUpdate?.(subresource, obj, old);
  def.strategy.defaults?.(obj);
  if (def.statusSubresource) {
    const oldGen = old.metadata.generation ?? 1;
    meta.generation = !subresource && !jsonEqual(specOf(obj), specOf(old)) ? oldGen + 1 : oldGen;
  } else if (def.custom) {
    // Without a status subresource every field but metadata is "spec" to a custom object.
    const oldGen = old.metadata.generation ?? 1;
    const { metadata: _a, ...next } = obj;
    const { metadata: _b, ...prev } = old;
    meta.generation = jsonEqual(next, prev) ? oldGen : oldGen + 1;
  } else {
    delete meta.generation;
  }
  validateOrThrow(def, obj, old, subresource);
  return obj;
}

/** True when admitting produced no change worth a write (kube skips no-op updates). */
export function unchanged(a: ApiObject, b: ApiObject): boolean {
  return jsonEqual(a, b);
}
