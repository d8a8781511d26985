/**
 * The LimitRanger admission plugin (upstream plugin/pkg/admission/limitranger), for the
 * LimitRanges of the object's namespace:
 *
 *   - mutating, new pods: each container (and init container) without a request or limit gets the
 *     Container item's defaultRequest / default, noted in the `kubernetes.io/limit-ranger`
 *     annotation;
 *   - validating, new pods and PVC writes: Container min/max/maxLimitRequestRatio per container,
 *     Pod min/max/maxLimitRequestRatio on the pod's totals, PersistentVolumeClaim min/max on
 *     `requests.storage`; 403 with upstream's messages, several joined as `[a, b]`.
 *
 * Pod updates are not judged (their resources cannot change), as upstream.
 */
import { canonicalQuantity, parseQuantityMilli, podQOSClass, podResources, type PodSpec, type ResourceList } from '@nodelet/api';
import type { ServerContext } from '../context.js';
import { listMirrored } from '../mirror.js';
import { validateOrThrow } from '../handlers/admit.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { forbidden } from '../status.js';
import type { AdmissionPlugin } from './types.js';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

interface Item {
  type: string;
  max?: ResourceList;
  min?: ResourceList;
  default?: ResourceList;
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
}

interface Container {
  name?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
}

const q = (s: string): string => canonicalQuantity(s);

/** Upstream minConstraint: the request must exist and be ≥ min; a limit, when set, too. */
export function minProblem(kind: string, name: string, min: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests[name];
  if (req === undefined) return `minimum ${name} usage per ${kind} is ${q(min)}.  No request is specified`;
  if (parseQuantityMilli(req) < parseQuantityMilli(min)) return `minimum ${name} usage per ${kind} is ${q(min)}, but request is ${q(req)}`;
  const lim = limits[name];
  if (lim !== undefined && parseQuantityMilli(lim) < parseQuantityMilli(min)) return `minimum ${name} usage per ${kind} is ${q(min)}, but limit is ${q(lim)}`;
  return undefined;
}

/** Upstream maxConstraint: the limit must exist and be ≤ max; a request, when set, too. */
export function maxProblem(kind: string, name: string, max: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const lim = limits[name];
  if (lim === undefined) return `maximum ${name} usage per ${kind} is ${q(max)}.  No limit is specified`;
  if (parseQuantityMilli(lim) > parseQuantityMilli(max)) return `maximum ${name} usage per ${kind} is ${q(max)}, but limit is ${q(lim)}`;
  const req = requests[name];
  if (req !== undefined && parseQuantityMilli(req) > parseQuantityMilli(max)) return `maximum ${name} usage per ${kind} is ${q(max)}, but request is ${q(req)}`;
  return undefined;
}

/** Upstream limitRequestRatioConstraint: limit ÷ request ≤ ratio, both set and non-zero. */
export function ratioProblem(kind: string, name: string, ratio: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests[name] === undefined ? 0 : parseQuantityMilli(requests[name]);
  const lim = limits[name] === undefined ? 0 : parseQuantityMilli(limits[name]);
  if (req === 0) return `${name} max limit to request ratio per ${kind} is ${q(ratio)}, but no request is specified or request is 0`;
  if (lim === 0) return `${name} max limit to request ratio per ${kind} is ${q(ratio)}, but no limit is specified or limit is 0`;
  const observed = lim / req;
  if (observed * 1000 > parseQuantityMilli(ratio)) return `${name} max limit to request ratio per ${kind} is ${q(ratio)}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

/** Every problem of `requests`/`limits` against `item` for objects of `kind`. */
function itemProblems(kind: string, item: Item, requests: ResourceList, limits: ResourceList): string[] {
  const out: Array<string | undefined> = [];
  for (const [k, v] of Object.entries(item.min ?? {})) out.push(minProblem(kind, k, v, requests, limits));
  for (const [k, v] of Object.entries(item.max ?? {})) out.push(maxProblem(kind, k, v, requests, limits));
  for (const [k, v] of Object.entries(item.maxLimitRequestRatio ?? {})) out.push(ratioProblem(kind, k, v, requests, limits));
  return out.filter((p): p is string => p !== undefined);
}

/** Fills a pod's containers from the Container items' defaults; returns the annotation's parts. */
export function applyContainerDefaults(spec: Json, items: readonly Item[]): string[] {
  const notes: string[] = [];
  for (const [list, label] of [['initContainers', 'init container'], ['containers', 'container']] as const) {
    const cs = (Array.isArray(spec[list]) ? spec[list] : []) as Container[];
    for (const c of cs) {
      const setReq: string[] = [];
      const setLim: string[] = [];
      for (const item of items) {
        const res = (c.resources ??= {});
        for (const [k, v] of Object.entries(item.defaultRequest ?? {})) {
          if (res.requests?.[k] !== undefined) continue;
          (res.requests ??= {})[k] = v;
          setReq.push(k);
        }
        for (const [k, v] of Object.entries(item.default ?? {})) {
          if (res.limits?.[k] !== undefined) continue;
          (res.limits ??= {})[k] = v;
          setLim.push(k);
        }
      }
      if (setReq.length) notes.push(`${setReq.sort().join(', ')} request for ${label} ${c.name ?? ''}`);
      if (setLim.length) notes.push(`${setLim.sort().join(', ')} limit for ${label} ${c.name ?? ''}`);
    }
  }
  return notes;
}

/** Problems of a pod against the items (Container per container, Pod on the totals). */
export function podProblems(spec: Json, items: readonly Item[]): string[] {
  const out: string[] = [];
  for (const item of items) {
    if (item.type === 'Container') {
      for (const list of ['initContainers', 'containers']) {
        for (const c of (Array.isArray(spec[list]) ? spec[list] : []) as Container[]) {
          out.push(...itemProblems('Container', item, c.resources?.requests ?? {}, c.resources?.limits ?? {}));
        }
      }
    } else if (item.type === 'Pod') {
      const ps = spec as unknown as PodSpec;
      out.push(...itemProblems('Pod', item, podResources(ps, 'requests'), podResources(ps, 'limits')));
    }
  }
  return out;
}

/** Problems of a claim against the PersistentVolumeClaim items (min on request and limit, max on request). */
export function claimProblems(spec: Json, items: readonly Item[]): string[] {
  const res = isPlainObject(spec.resources) ? spec.resources : {};
  const requests = (isPlainObject(res.requests) ? res.requests : {}) as ResourceList;
  const limits = (isPlainObject(res.limits) ? res.limits : {}) as ResourceList;
  const out: Array<string | undefined> = [];
  for (const item of items.filter((i) => i.type === 'PersistentVolumeClaim')) {
    for (const [k, v] of Object.entries(item.min ?? {})) out.push(minProblem('PersistentVolumeClaim', k, v, requests, limits));
    for (const [k, v] of Object.entries(item.max ?? {})) {
      const req = requests[k];
      if (req === undefined) out.push(`maximum ${k} usage per PersistentVolumeClaim is ${q(v)}.  No request is specified`);
      else if (parseQuantityMilli(req) > parseQuantityMilli(v)) out.push(`maximum ${k} usage per PersistentVolumeClaim is ${q(v)}, but request is ${q(req)}`);
    }
  }
  return out.filter((p): p is string => p !== undefined);
}

async function itemsOf(ctx: ServerContext, namespace: string): Promise<Item[]> {
  const served = ctx.resource('', 'v1', 'limitranges');
  if (!served) return [];
  // Every pod create reads them: from memory, as upstream's lister.
  const ranges = await listMirrored(ctx, served, namespace);
  return ranges.flatMap((lr) => (isPlainObject(lr.spec) && Array.isArray(lr.spec.limits) ? (lr.spec.limits as unknown as Item[]) : []));
}

/** Upstream's aggregate error text: one message as is, several as `[a, b]`. */
const aggregate = (problems: readonly string[]): string => (problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);

export const limitRangerAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.subresource || r.def.group !== '' || !r.object || !r.namespace || r.operation === 'DELETE') return;
  const obj: ApiObject = r.object;
  const spec = obj.spec;
  if (!isPlainObject(spec)) return;
  if (r.def.plural === 'pods' && r.operation === 'CREATE') {
    const items = await itemsOf(ctx, r.namespace);
    if (!items.length) return;
    const notes = applyContainerDefaults(spec, items.filter((i) => i.type === 'Container'));
    if (notes.length) {
      (obj.metadata.annotations ??= {})[LIMIT_RANGER_ANNOTATION] = `LimitRanger plugin set: ${notes.join('; ')}`;
      if (isPlainObject(obj.status)) obj.status.qosClass = podQOSClass(spec as unknown as PodSpec);
      // Upstream mutates before validation: a default may make a request exceed its limit.
      validateOrThrow(r.def, obj);
    }
    const problems = podProblems(spec, items);
    if (problems.length) throw forbidden(`pods "${obj.metadata.name ?? ''}" is forbidden: ${aggregate(problems)}`);
  } else if (r.def.plural === 'persistentvolumeclaims') {
    const problems = claimProblems(spec, await itemsOf(ctx, r.namespace));
    if (problems.length) throw forbidden(`persistentvolumeclaims "${obj.metadata.name ?? ''}" is forbidden: ${aggregate(problems)}`);
  }
};
