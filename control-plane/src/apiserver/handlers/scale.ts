/** The autoscaling/v1 Scale subresource of deployments, replicasets, statefulsets and custom resources (`kubectl scale`). */
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { applyPatch, parsePatchBody, patchTypeOf } from '../patch/apply.js';
import { sendJson } from '../respond.js';
import { badRequest, conflict, invalid } from '../status.js';
import { admitUpdate } from './admit.js';
import { writeOptionsOf } from '../request-options.js';
import { managerOf, updateManagedFields } from '../fieldmanager/manager.js';
import { typesOfDef } from '../fieldmanager/typed.js';
import { apiVersionOf } from '../resource.js';
import { addWarnings, enforceFieldValidation } from '../field-validation.js';
import { readJsonPath, writeJsonPath } from '../apiextensions/custom-defs.js';
import type { ResourceDef } from '../resource.js';

const SCALE = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

function selectorString(sel: unknown): string {
  if (!isPlainObject(sel)) return '';
  const parts = Object.entries((sel.matchLabels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`);
  for (const e of (sel.matchExpressions ?? []) as Array<{ key: string; operator: string; values?: string[] }>) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${(e.values ?? []).join(',')})`);
  }
  return parts.join(',');
}

/** Where a kind keeps its replica counts and selector: a CRD's scale subresource names them, built-ins use spec/status.replicas. */
function scalePaths(def: ResourceDef): { spec: string; status: string; selector?: string } {
  const c = def.custom?.scale;
  return c ? { spec: c.specReplicasPath, status: c.statusReplicasPath, selector: c.labelSelectorPath } : { spec: '.spec.replicas', status: '.status.replicas' };
}

export function scaleOf(obj: ApiObject, def?: ResourceDef): ApiObject {
  const paths = def ? scalePaths(def) : { spec: '.spec.replicas', status: '.status.replicas' };
  const specSelector = (obj.spec as Json | undefined)?.selector;
  // A ReplicationController's selector is a plain label map.
  const selector = def?.custom ? (paths.selector ? readJsonPath(obj, paths.selector) : undefined) : selectorString(obj.kind === 'ReplicationController' ? { matchLabels: specSelector } : specSelector);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: readJsonPath(obj, paths.spec) ?? 0 },
    status: { replicas: readJsonPath(obj, paths.status) ?? 0, ...(typeof selector === 'string' && (selector || !def?.custom) ? { selector } : {}) },
  };
}

export async function handleScale(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const name = s.name!;
  const method = s.req.method ?? 'GET';
  if (method === 'GET') {
    sendJson(s.res, 200, scaleOf(await registry.get(s.namespace, name), def));
    return;
  }
  const { dryRun, fieldValidation, fieldManager } = writeOptionsOf(s.url, method === 'PUT' ? 'UpdateOptions' : 'PatchOptions', s.req.headers['content-type']?.includes('apply-patch') ?? false);
  let warnings: string[] = [];
  const raw = await bodyOf(s);
  let next: (current: ApiObject) => ApiObject;
  let dryResult: ApiObject | undefined;
  if (method === 'PUT') {
    const body = decodeObjectBody(s.req.headers['content-type'], raw);
    warnings = enforceFieldValidation(fieldValidation, SCALE, body, 'object');
    next = () => body as ApiObject;
  } else {
    const type = patchTypeOf(s.req.headers['content-type']);
    if (type === 'apply') throw badRequest('server-side apply is not supported on the scale subresource');
    const patch = parsePatchBody(type, raw);
    next = (current) => {
      const patched = applyPatch(type, current, patch, 'Scale');
      warnings = enforceFieldValidation(fieldValidation, SCALE, patched, 'patch');
      return patched;
    };
  }
  const result = await registry.guaranteedUpdate(s.namespace, name, (current) => {
    const wanted = next(scaleOf(current, def));
    const rv = wanted.metadata?.resourceVersion;
    if (rv && rv !== current.metadata.resourceVersion) throw conflict(def.plural, def.group, name);
    const replicas = (wanted.spec as Json | undefined)?.replicas;
    if (!Number.isInteger(replicas) || (replicas as number) < 0) {
      throw invalid('Scale', 'autoscaling', name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
    }
    const specPath = scalePaths(def).spec;
    if (readJsonPath(current, specPath) === replicas) return undefined;
    const updated = structuredClone(current);
    writeJsonPath(updated, specPath, replicas);
    const admitted = admitUpdate(def, updated, current);
    // The manager owns .spec.replicas as a write through the `scale` subresource (a later apply of another value conflicts).
    const context = { types: typesOfDef(def), apiVersion: apiVersionOf(def), subresource: 'scale', statusSubresource: def.statusSubresource, now: s.ctx.now() };
    admitted.metadata.managedFields = updateManagedFields(context, current, admitted, managerOf(fieldManager, s.req.headers['user-agent']));
    if (!dryRun) return admitted;
    dryResult = admitted;
    return undefined;
  });
  addWarnings(s.res, warnings);
  sendJson(s.res, 200, scaleOf(dryResult ?? result.object, def));
}
