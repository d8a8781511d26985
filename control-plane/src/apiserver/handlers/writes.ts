/** POST (create), PUT (update) and PATCH of a resource or its /status. */
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import type { ApiObject } from '../object.js';
import { applyConfiguration, applyPatch, parsePatchBody, patchTypeOf, recordManagedFields } from '../patch/apply.js';
import { apiVersionOf } from '../resource.js';
import { sendObject } from '../respond.js';
import { badRequest, conflict, methodNotAllowed, notFound } from '../status.js';
import { admitCreate, admitUpdate, asObject, checkNamespace, reconcileNamespace, unchanged, type StatusLikeSubresource } from './admit.js';
import { enforceApplySchema, enforceFieldValidation, fieldValidationOf } from '../field-validation.js';
import { finishDeletionIfReady } from './delete.js';
import { withClusterIp } from './service-ip.js';
import { admit } from '../admission/index.js';
import { awaitVisible } from './visibility.js';

const isDryRun = (url: URL): boolean => url.searchParams.getAll('dryRun').includes('All');
const STATUS_LIKE = new Set(['status', 'approval']);
const statusLike = (sub: string | undefined): StatusLikeSubresource | undefined => (sub === 'status' || sub === 'approval' ? sub : undefined);


export async function handleCreate(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  if (s.subresource) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const validation = fieldValidationOf(s.url);
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  enforceFieldValidation(validation, def, body, s.res, 'object');
  const obj = asObject(def, body);
  reconcileNamespace(def, obj, s.namespace);
  if (def.namespaced && !obj.metadata.namespace) throw badRequest('the namespace of the object is missing');
  await checkNamespace(s.ctx, def, obj.metadata.namespace);
  admitCreate(s.ctx, def, obj);
  await admit(s.ctx, { operation: 'CREATE', user: s.user, def, namespace: obj.metadata.namespace, name: obj.metadata.name, object: obj });
  const manager = s.url.searchParams.get('fieldManager');
  if (manager) recordManagedFields(obj, body, manager, 'Update', apiVersionOf(def), s.ctx.now());
  const persist = (): Promise<ApiObject> => (isDryRun(s.url) ? Promise.resolve(obj) : registry.create(obj));
  const created = def.kind === 'Service' ? await withClusterIp(s.ctx, obj, persist, s.ctx.serviceCidr) : await persist();
  await awaitVisible(s.ctx, def, created);
  sendObject(s.res, 201, def, created, s.req.headers.accept, s.url, s.ctx.now());
}

export async function handleUpdate(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const name = s.name!;
  if (s.subresource && !STATUS_LIKE.has(s.subresource)) throw methodNotAllowed('the server does not allow this method on the requested resource');
  const validation = fieldValidationOf(s.url);
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  enforceFieldValidation(validation, def, body, s.res, 'object');
  const next = asObject(def, body);
  reconcileNamespace(def, next, s.namespace);
  if (next.metadata.name && next.metadata.name !== name) throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`);
  next.metadata.name = name;
  const precondition = next.metadata.resourceVersion || undefined;
  const status = statusLike(s.subresource);
  const dryRun = isDryRun(s.url);
  let dryResult: ApiObject | undefined;
  const result = await registry.guaranteedUpdate(
    s.namespace,
    name,
    async (current) => {
      const admitted = admitUpdate(def, structuredClone(next), current, status);
      if (unchanged(admitted, current)) return undefined;
      await admit(s.ctx, { operation: 'UPDATE', user: s.user, def, subresource: s.subresource, namespace: s.namespace, name, object: admitted, oldObject: current });
      if (dryRun) {
        dryResult = admitted;
        return undefined;
      }
      return admitted;
    },
    { preconditionRV: precondition },
  );
  let out = dryResult ?? result.object;
  if (result.changed) out = (await finishDeletionIfReady(s.served, out)) ?? out;
  if (result.changed) await awaitVisible(s.ctx, def, out);
  sendObject(s.res, 200, def, out, s.req.headers.accept, s.url, s.ctx.now());
}

export async function handlePatch(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const name = s.name!;
  if (s.subresource && !STATUS_LIKE.has(s.subresource)) throw methodNotAllowed('the server does not allow this method on the requested resource');
  const validation = fieldValidationOf(s.url);
  const type = patchTypeOf(s.req.headers['content-type']);
  const patch = parsePatchBody(type, await bodyOf(s));
  if (type === 'apply') enforceApplySchema(def, patch, { namespace: s.namespace, name });
  else if (type !== 'json') enforceFieldValidation(validation, def, patch, s.res, 'patch');
  const status = statusLike(s.subresource);
  const dryRun = isDryRun(s.url);
  const manager = s.url.searchParams.get('fieldManager') ?? undefined;
  if (type === 'apply' && !manager) throw badRequest('PATCH requests with apply content type require a fieldManager');
  let dryResult: ApiObject | undefined;
  let created = false;
  const preconditionOf = (p: unknown): string | undefined => {
    const rv = (p as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
    return typeof rv === 'string' && rv !== '' ? rv : undefined;
  };
  const precondition = type === 'json' ? undefined : preconditionOf(patch);

  const ifMissing =
    type === 'apply' && !status
      ? async (): Promise<ApiObject> => {
          const obj = asObject(def, structuredClone(patch) as Record<string, unknown>);
          reconcileNamespace(def, obj, s.namespace);
          if (obj.metadata.name && obj.metadata.name !== name) throw badRequest('the name of the object does not match the name on the URL');
          obj.metadata.name = name;
          await checkNamespace(s.ctx, def, obj.metadata.namespace);
          admitCreate(s.ctx, def, obj);
          await admit(s.ctx, { operation: 'CREATE', user: s.user, def, namespace: obj.metadata.namespace, name, object: obj });
          recordManagedFields(obj, patch as Record<string, unknown>, manager!, 'Apply', apiVersionOf(def), s.ctx.now());
          created = true;
          const persist = (): Promise<ApiObject> => (dryRun ? Promise.resolve(obj) : registry.create(obj));
          return def.kind === 'Service' ? withClusterIp(s.ctx, obj, persist, s.ctx.serviceCidr) : persist();
        }
      : undefined;

  const result = await registry.guaranteedUpdate(
    s.namespace,
    name,
    async (current) => {
      let next: ApiObject;
      if (type === 'apply') {
        const applied = asObject(def, structuredClone(patch) as Record<string, unknown>);
        next = applyConfiguration(current, applied, def.kind);
        recordManagedFields(next, patch as Record<string, unknown>, manager!, 'Apply', apiVersionOf(def), s.ctx.now(), status);
      } else {
        next = applyPatch(type, current, patch, def.kind);
        if (type === 'json') {
          const rv = next.metadata.resourceVersion;
          if (rv && rv !== current.metadata.resourceVersion) throw conflict(def.plural, def.group, name);
        }
      }
      if (next.metadata.name !== undefined && next.metadata.name !== name) throw badRequest('metadata.name cannot be changed by a patch');
      next.metadata.resourceVersion = current.metadata.resourceVersion;
      const admitted = admitUpdate(def, next, current, status);
      if (unchanged(admitted, current)) return undefined;
      await admit(s.ctx, { operation: 'UPDATE', user: s.user, def, subresource: s.subresource, namespace: s.namespace, name, object: admitted, oldObject: current });
      if (dryRun) {
        dryResult = admitted;
        return undefined;
      }
      return admitted;
    },
    { preconditionRV: precondition, ...(ifMissing ? { ifMissing } : {}) },
  ).catch((err: unknown) => {
    if (err && typeof err === 'object' && (err as { reason?: string }).reason === 'NotFound' && !ifMissing) throw notFound(def.plural, def.group, name);
    throw err;
  });
  let out = dryResult ?? result.object;
  if (result.changed && !created) out = (await finishDeletionIfReady(s.served, out)) ?? out;
  if (result.changed && !dryResult) await awaitVisible(s.ctx, def, out);
  sendObject(s.res, created ? 201 : 200, def, out, s.req.headers.accept, s.url, s.ctx.now());
}
