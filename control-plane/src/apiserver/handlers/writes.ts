/** POST (create), PUT (update) and PATCH of a resource or its /status. */
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import type { ApiObject } from '../object.js';
import { applyPatch, parsePatchBody, patchTypeOf } from '../patch/apply.js';
import { managerOf, updateManagedFields, type WriteContext } from '../fieldmanager/manager.js';
import { applyWithLastApplied } from '../fieldmanager/last-applied.js';
import { applyConfigErrors, typesOfDef } from '../fieldmanager/typed.js';
import { apiVersionOf } from '../resource.js';
import { sendObject } from '../respond.js';
import { badRequest, conflict, methodNotAllowed, notFound } from '../status.js';
import { admitCreate, admitUpdate, asObject, checkNamespace, reconcileNamespace, unchanged, type StatusLikeSubresource } from './admit.js';
import { addWarnings, enforceApplySchema, enforceByteFields, enforceFieldValidation } from '../field-validation.js';
import { cloneJson, isPlainObject } from '../object.js';
import { parseResourceVersion, writeOptionsOf } from '../request-options.js';
import type { ResourceDef } from '../resource.js';
import { finishDeletionIfReady } from './delete.js';
import { withClusterIp } from './service-ip.js';
import { admit } from '../admission/index.js';
import { scopeRecorder } from '../admission/recorder.js';
import { awaitVisible } from './visibility.js';
import { createdJsonOf } from '../registry.js';

/** `?dryRun=All`: everything is admitted, nothing is written; `result` is what would have been. */
interface DryRun {
  run: boolean;
  result?: ApiObject;
}

/** PUT and PATCH write the object or a subresource owning one part of it (status, approval, ephemeralcontainers, resize), nothing else. */
function writableSubresource(s: RequestScope): StatusLikeSubresource | undefined {
  if (s.subresource === undefined) return undefined;
  if (s.subresource === 'status' || s.subresource === 'approval' || s.subresource === 'ephemeralcontainers' || s.subresource === 'resize') return s.subresource;
  throw methodNotAllowed('the server does not allow this method on the requested resource');
}

/** What the field manager needs of this request (`subresource`: the one written, '' for the object). */
function writeContext(s: RequestScope, subresource = ''): WriteContext {
  const { def } = s.served;
  return { types: typesOfDef(def), apiVersion: apiVersionOf(def), subresource, statusSubresource: def.statusSubresource, now: s.ctx.now() };
}

/** The manager of this write: `?fieldManager`, else from the User-Agent. */
const managerOfRequest = (s: RequestScope, fieldManager: string | undefined): string => managerOf(fieldManager, s.req.headers['user-agent']);

/**
 * Admits a new object (namespace, defaults, admission plugins), records its manager and stores it
 * unless this is a dry run; a Service gets its ClusterIP. For POST and for an apply that creates
 * (whose managedFields the apply already set: `manager` undefined).
 */
async function createAdmitted(s: RequestScope, obj: ApiObject, dryRun: boolean, manager?: string): Promise<ApiObject> {
  const { def, registry } = s.served;
  await checkNamespace(s.ctx, def, obj.metadata.namespace);
  // Defaults count as the creator's fields (upstream decodes them in before the field manager runs);
  // what the strategy's prepareForCreate adds (a CRD's cleanup finalizer, a reset status) does not,
  // as upstream's strategy runs after it: else an apply that omits such a field would remove it.
  const declared = manager !== undefined ? cloneJson(obj) : undefined;
  admitCreate(s.ctx, def, obj);
  if (declared) {
    def.strategy.defaults?.(declared);
    obj.metadata.managedFields = updateManagedFields(writeContext(s), undefined, declared, manager!);
  }
  await admit(s.ctx, { operation: 'CREATE', user: s.user, def, namespace: obj.metadata.namespace, name: obj.metadata.name, object: obj, recorder: scopeRecorder(s), dryRun, signal: s.signal });
  const persist = (): Promise<ApiObject> => (dryRun ? Promise.resolve(obj) : registry.create(obj, { signal: s.signal }));
  return def.kind === 'Service' ? withClusterIp(s.ctx, obj, persist, s.ctx.serviceCidr, dryRun) : persist();
}

/**
 * The update to write for `next` over `current` (guaranteedUpdate's step): admitted, or
 * undefined when it changes nothing or is a dry run (whose result is kept in `dry`). `managed`
 * sets the admitted object's managedFields.
 */
async function admitUpdateOf(s: RequestScope, current: ApiObject, next: ApiObject, status: StatusLikeSubresource | undefined, dry: DryRun, managed: (admitted: ApiObject) => void): Promise<ApiObject | undefined> {
  const { def } = s.served;
  const admitted = admitUpdate(def, next, current, status);
  managed(admitted);
  if (unchanged(admitted, current)) return undefined;
  await admit(s.ctx, { operation: 'UPDATE', user: s.user, def, subresource: s.subresource, namespace: s.namespace, name: s.name!, object: admitted, oldObject: current, recorder: scopeRecorder(s), dryRun: dry.run, signal: s.signal });
  if (dry.run) {
    dry.result = admitted;
    return undefined;
  }
  return admitted;
}

export async function handleCreate(s: RequestScope): Promise<void> {
  const { def } = s.served;
  const receivedAt = s.ctx.journeys?.now();
  if (s.subresource) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const { dryRun, fieldManager: manager, fieldValidation } = writeOptionsOf(s.url, 'CreateOptions');
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const warnings = enforceFieldValidation(fieldValidation, def, body, 'object');
  enforceByteFields(def, body, 'object');
  const obj = asObject(def, body);
  reconcileNamespace(def, obj, s.namespace);
  if (def.namespaced && !obj.metadata.namespace) throw badRequest('the namespace of the object is missing');
  // The annotation must be on the pod before admission validates and the store writes it.
  const journey = def.kind === 'Pod' && !dryRun && receivedAt !== undefined ? s.ctx.journeys?.begin(obj, receivedAt) : undefined;
  const created = await createAdmitted(s, obj, dryRun, managerOfRequest(s, manager));
  if (!dryRun) await awaitVisible(s.ctx, def, created);
  journey?.created(created);
  addWarnings(s.res, [...warnings, ...(def.strategy.warnings?.(created) ?? [])]);
  // The reply reuses the fields the registry stringified for the store.
  sendObject(s.res, 201, def, created, s.req.headers.accept, s.url, s.ctx.now(), dryRun ? undefined : createdJsonOf(created));
}

export async function handleUpdate(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const name = s.name!;
  const status = writableSubresource(s);
  const options = writeOptionsOf(s.url, 'UpdateOptions');
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const warnings = enforceFieldValidation(options.fieldValidation, def, body, 'object');
  enforceByteFields(def, body, 'object');
  const next = asObject(def, body);
  reconcileNamespace(def, next, s.namespace);
  if (next.metadata.name && next.metadata.name !== name) throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`);
  next.metadata.name = name;
  const precondition = preconditionOf(next);
  const dry: DryRun = { run: options.dryRun };
  const manager = managerOfRequest(s, options.fieldManager);
  const tracked = (current: ApiObject) => (admitted: ApiObject) => {
    admitted.metadata.managedFields = updateManagedFields(writeContext(s, status), current, admitted, manager);
  };
  const result = await registry.guaranteedUpdate(s.namespace, name, (current) => admitUpdateOf(s, current, cloneJson(next), status, dry, tracked(current)), { preconditionRV: precondition, signal: s.signal });
  let out = dry.result ?? result.object;
  if (result.changed) out = (await finishDeletionIfReady(s.served, out)) ?? out;
  if (result.changed) await awaitVisible(s.ctx, def, out);
  if (result.changed && status === 'status' && def.kind === 'Pod') s.ctx.journeys?.statusWritten(out);
  addWarnings(s.res, [...warnings, ...(s.subresource ? [] : (def.strategy.warnings?.(out) ?? []))]);
  sendObject(s.res, 200, def, out, s.req.headers.accept, s.url, s.ctx.now());
}

/**
 * A resourceVersion precondition in a body (`metadata.resourceVersion`), checked to be one as
 * storage would parse it (400 otherwise); undefined when unset.
 */
function preconditionOf(body: unknown): string | undefined {
  const rv = isPlainObject(body) && isPlainObject(body.metadata) ? body.metadata.resourceVersion : undefined;
  if (rv === undefined || rv === null || rv === '') return undefined;
  if (typeof rv !== 'string') throw badRequest('metadata.resourceVersion must be a string');
  parseResourceVersion(rv);
  return rv;
}

/**
 * A patch may not turn the object into another kind or version (upstream decodes the patched
 * object into the type the URL names and fails). One check, on the patched object, for every patch type.
 */
function checkTypeUnchanged(def: ResourceDef, current: ApiObject, patched: ApiObject): void {
  const apiVersion = patched.apiVersion ?? apiVersionOf(def);
  const kind = patched.kind ?? def.kind;
  // The stored object's own apiVersion (a kind served in several versions) is no change either.
  if ((apiVersion !== apiVersionOf(def) && apiVersion !== current.apiVersion) || kind !== def.kind) {
    throw badRequest(`the patched object's API version (${String(apiVersion)}) and kind (${String(kind)}) do not match the request path (${apiVersionOf(def)}, ${def.kind}): a patch cannot change them`);
  }
}

export async function handlePatch(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const name = s.name!;
  const status = writableSubresource(s);
  const type = patchTypeOf(s.req.headers['content-type']);
  const { dryRun, fieldManager, fieldValidation, force } = writeOptionsOf(s.url, 'PatchOptions', type === 'apply');
  const manager = managerOfRequest(s, fieldManager);
  const patch = parsePatchBody(type, await bodyOf(s));
  if (type === 'apply') {
    const meta = (patch as { metadata?: { managedFields?: unknown } }).metadata;
    if (isPlainObject(meta) && meta.managedFields !== undefined && meta.managedFields !== null) throw badRequest('metadata.managedFields must be nil');
    // Keyed list items without their keys, or twice the same keys, are refused as upstream's typed conversion does.
    enforceApplySchema(def, patch, { namespace: s.namespace, name }, applyConfigErrors(typesOfDef(def), patch as Record<string, unknown>));
  }
  const dry: DryRun = { run: dryRun };
  let created = false;
  let warnings: string[] = [];
  const precondition = type === 'json' ? undefined : preconditionOf(patch);

  const ifMissing =
    type === 'apply' && !status
      ? async (): Promise<ApiObject> => {
          const obj = applyWithLastApplied(writeContext(s), undefined, asObject(def, cloneJson(patch) as Record<string, unknown>), manager, force);
          reconcileNamespace(def, obj, s.namespace);
          if (obj.metadata.name && obj.metadata.name !== name) throw badRequest('the name of the object does not match the name on the URL');
          obj.metadata.name = name;
          enforceByteFields(def, obj, 'patch');
          created = true;
          return createAdmitted(s, obj, dry.run);
        }
      : undefined;

  const result = await registry.guaranteedUpdate(
    s.namespace,
    name,
    async (current) => {
      let next: ApiObject;
      let managed: (admitted: ApiObject) => void;
      if (type === 'apply') {
        const applied = asObject(def, cloneJson(patch) as Record<string, unknown>);
        next = applyWithLastApplied(writeContext(s, status), current, applied, manager, force);
        const fields = next.metadata.managedFields;
        managed = (admitted) => {
          admitted.metadata.managedFields = fields;
        };
      } else {
        managed = (admitted) => {
          admitted.metadata.managedFields = updateManagedFields(writeContext(s, status), current, admitted, manager);
        };
        next = applyPatch(type, current, patch, def.kind);
        if (type === 'json') {
          const rv = next.metadata.resourceVersion;
          if (rv && rv !== current.metadata.resourceVersion) throw conflict(def.plural, def.group, name);
        }
      }
      checkTypeUnchanged(def, current, next);
      if (type !== 'apply') warnings = enforceFieldValidation(fieldValidation, def, next, 'patch');
      enforceByteFields(def, next, 'patch');
      if (next.metadata.name !== undefined && next.metadata.name !== name) throw badRequest('metadata.name cannot be changed by a patch');
      next.metadata.resourceVersion = current.metadata.resourceVersion;
      return admitUpdateOf(s, current, next, status, dry, managed);
    },
    { preconditionRV: precondition, signal: s.signal, ...(ifMissing ? { ifMissing } : {}) },
  ).catch((err: unknown) => {
    if (err && typeof err === 'object' && (err as { reason?: string }).reason === 'NotFound' && !ifMissing) throw notFound(def.plural, def.group, name);
    throw err;
  });
  let out = dry.result ?? result.object;
  if (result.changed && !dry.run && !created) out = (await finishDeletionIfReady(s.served, out)) ?? out;
  if (result.changed && !dry.run) await awaitVisible(s.ctx, def, out);
  if (result.changed && !dry.run && status === 'status' && def.kind === 'Pod') s.ctx.journeys?.statusWritten(out);
  addWarnings(s.res, [...warnings, ...(s.subresource ? [] : (def.strategy.warnings?.(out) ?? []))]);
  sendObject(s.res, created ? 201 : 200, def, out, s.req.headers.accept, s.url, s.ctx.now());
}
