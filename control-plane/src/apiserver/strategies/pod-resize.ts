/**
 * In-place pod resize (KEP 1287, InPlacePodVerticalScaling as in Kubernetes 1.33): the
 * `pods/resize` subresource changes only `spec.containers[*].resources` (cpu and memory), the
 * agent allocates and actuates them and reports progress in the pod's conditions.
 *
 *   dropNonResizeUpdates   what a write to pods/resize keeps of the body: the stored pod with each
 *                          container's resources and resizePolicy taken from the body, by name
 *   podResizeErrors        kube's ValidatePodResize: no static or Windows pod, the QoS class stays,
 *                          and nothing but cpu/memory requests and limits of app containers changes
 *   resizePolicyErrors     kube's validateResizePolicy, on create and update
 */
import { duplicate, forbiddenField, invalidValue, notSupported, parseQuantityMilli, podQOSClass, required, type FieldError, type PodSpec } from '@nodelet/api';
import { cloneJson, isPlainObject, jsonEqual, type ApiObject, type Json } from '../object.js';

const RESIZABLE = ['cpu', 'memory'] as const;
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'] as const;

function containersOf(spec: unknown, list = 'containers'): Json[] {
  const v = isPlainObject(spec) ? (spec as Json)[list] : undefined;
  return Array.isArray(v) ? (v as Json[]).filter(isPlainObject) : [];
}

/**
 * The spec a pods/resize write stores: the stored one, with `resources` and `resizePolicy` of each
 * app container the body names (containers may not be added, removed or reordered through it).
 */
export function dropNonResizeUpdates(next: unknown, old: Json): Json {
  const spec = cloneJson(old);
  const byName = new Map(containersOf(next).map((c) => [String(c.name), c]));
  for (const c of containersOf(spec)) {
    const n = byName.get(String(c.name));
    if (!n) continue;
    if (n.resources === undefined) delete c.resources;
    else c.resources = cloneJson(n.resources as Json);
    if (n.resizePolicy === undefined) delete c.resizePolicy;
    else c.resizePolicy = cloneJson(n.resizePolicy as Json);
  }
  return spec;
}

/** The resource list with cpu and memory put back to `before`'s (absent when `before` had no list). */
function withOldCpuMemory(list: unknown, before: unknown): Json | undefined {
  if (!isPlainObject(before)) return undefined;
  const out: Json = isPlainObject(list) ? { ...(list as Json) } : {};
  for (const r of RESIZABLE) {
    delete out[r];
    if ((before as Json)[r] !== undefined) out[r] = (before as Json)[r];
  }
  return out;
}

/** kube's ValidatePodResize for `obj` (after dropNonResizeUpdates) over the stored `old`. */
export function podResizeErrors(obj: ApiObject, old: ApiObject): FieldError[] {
  if (old.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return [forbiddenField('', 'static pods cannot be resized')];
  const oldSpec = (isPlainObject(old.spec) ? old.spec : {}) as Json;
  const newSpec = (isPlainObject(obj.spec) ? obj.spec : {}) as Json;
  if (isPlainObject(oldSpec.os) && (oldSpec.os as Json).name === 'windows') return [forbiddenField('', 'windows pods cannot be resized')];
  const errs: FieldError[] = [];
  const before = (old.status as Json | undefined)?.qosClass ?? podQOSClass(oldSpec as unknown as PodSpec);
  if (podQOSClass(newSpec as unknown as PodSpec) !== before) errs.push(invalidValue('spec', before, 'Pod QoS is immutable'));
  // Everything but cpu/memory of the app containers must be as stored.
  const oldContainers = containersOf(oldSpec);
  const masked = cloneJson(newSpec);
  containersOf(masked).forEach((c, i) => {
    const was = oldContainers[i];
    if (!was) return;
    const res = isPlainObject(c.resources) ? (c.resources as Json) : {};
    const wasRes = isPlainObject(was.resources) ? (was.resources as Json) : {};
    const next: Json = {};
    for (const k of ['limits', 'requests'] as const) {
      const v = withOldCpuMemory(res[k], wasRes[k]);
      if (v !== undefined) next[k] = v;
      else if (res[k] !== undefined && Object.keys(res[k] as Json).some((r) => !(RESIZABLE as readonly string[]).includes(r))) next[k] = res[k];
    }
    for (const [k, v] of Object.entries(res)) if (k !== 'limits' && k !== 'requests') next[k] = v;
    if (Object.keys(next).length === 0 && was.resources === undefined) delete c.resources;
    else c.resources = next;
  });
  if (!jsonEqual(normalised(masked), normalised(oldSpec))) errs.push(forbiddenField('spec', 'only cpu and memory resources are mutable'));
  containersOf(newSpec).forEach((c, i) => errs.push(...requestsWithinLimits(c, `spec.containers[${i}].resources`)));
  return errs;
}

/** kube's ValidateResourceRequirements rule that a request may not exceed its limit (cpu, memory). */
function requestsWithinLimits(c: Json, path: string): FieldError[] {
  const r = (isPlainObject(c.resources) ? c.resources : {}) as Json;
  const req = (isPlainObject(r.requests) ? r.requests : {}) as Json;
  const lim = (isPlainObject(r.limits) ? r.limits : {}) as Json;
  const errs: FieldError[] = [];
  for (const name of RESIZABLE) {
    const q = req[name];
    const l = lim[name];
    if (q === undefined || l === undefined) continue;
    try {
      if (parseQuantityMilli(String(q)) > parseQuantityMilli(String(l))) errs.push(invalidValue(`${path}.requests[${name}]`, String(q), `must be less than or equal to ${name} limit of ${String(l)}`));
    } catch {
      // A malformed quantity is reported by the spec validation.
    }
  }
  return errs;
}

/** Empty resource lists count as absent (as the Go structs' nil and empty maps do). */
function normalised(spec: Json): Json {
  const out = cloneJson(spec);
  for (const c of containersOf(out)) {
    if (!isPlainObject(c.resources)) continue;
    const r = c.resources as Json;
    for (const k of ['limits', 'requests']) if (isPlainObject(r[k]) && Object.keys(r[k] as Json).length === 0) delete r[k];
    if (Object.keys(r).length === 0) delete c.resources;
  }
  return out;
}

/** kube's validateResizePolicy for every container of the spec. */
export function resizePolicyErrors(spec: unknown): FieldError[] {
  if (!isPlainObject(spec)) return [];
  const podRestart = (spec as Json).restartPolicy;
  const errs: FieldError[] = [];
  for (const list of ['containers', 'initContainers']) {
    containersOf(spec, list).forEach((c, i) => {
      const policies = c.resizePolicy;
      if (!Array.isArray(policies)) return;
      const seen = new Set<string>();
      policies.forEach((p: unknown, j) => {
        const path = `spec.${list}[${i}].resizePolicy[${j}]`;
        const pol = (isPlainObject(p) ? p : {}) as Json;
        const name = pol.resourceName;
        if (name === undefined || name === '') errs.push(required(`${path}.resourceName`));
        else if (!(RESIZABLE as readonly unknown[]).includes(name)) errs.push(notSupported(`${path}.resourceName`, name, RESIZABLE));
        else if (seen.has(String(name))) errs.push(duplicate(`${path}.resourceName`, name));
        else seen.add(String(name));
        const restart = pol.restartPolicy;
        if (restart === undefined || restart === '') errs.push(required(`${path}.restartPolicy`));
        else if (!(RESIZE_POLICIES as readonly unknown[]).includes(restart)) errs.push(notSupported(`${path}.restartPolicy`, restart, RESIZE_POLICIES));
        else if (podRestart === 'Never' && restart !== 'NotRequired') errs.push(invalidValue(path, restart, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
      });
    });
  }
  return errs;
}
