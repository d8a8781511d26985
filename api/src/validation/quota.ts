/**
 * ResourceQuota and LimitRange (v1) and PriorityClass (scheduling.k8s.io/v1) validation and
 * defaults, with upstream's field paths and messages (pkg/apis/core/validation,
 * pkg/apis/scheduling/validation, pkg/apis/core/v1/defaults.go).
 */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { qualifiedNameProblem } from './names.js';
import { parseQuantityMilli } from '../quantity.js';
import { isPodResource } from '../quota/evaluator.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const QUANTITY_PATTERN = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const SCOPES = ['BestEffort', 'NotBestEffort', 'NotTerminating', 'PriorityClass', 'Terminating'];
const OPERATORS = ['DoesNotExist', 'Exists', 'In', 'NotIn'];
/** Quota resources that count objects: their hard values must be whole numbers. */
const INTEGER_RESOURCES = new Set(['pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);

/** A non-negative quantity map; `integer` names must be whole. Returns errors; `out` gets the milli values. */
function quantityMapErrors(m: unknown, path: string, out: Map<string, number> = new Map()): FieldError[] {
  if (m === undefined || m === null) return [];
  if (!isObj(m)) return [invalidValue(path, m, 'must be an object')];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(m)) {
    const field = `${path}[${k}]`;
    const kp = qualifiedNameProblem(k.startsWith('count/') ? k.slice('count/'.length) : k);
    if (kp) errs.push(invalidValue(path, k, kp));
    let milli: number;
    try {
      milli = parseQuantityMilli(String(v));
    } catch {
      errs.push(invalidValue(field, v, QUANTITY_PATTERN));
      continue;
    }
    if (milli < 0) errs.push(invalidValue(field, v, 'must be greater than or equal to 0'));
    else if ((INTEGER_RESOURCES.has(k) || k.startsWith('count/')) && milli % 1000 !== 0) errs.push(invalidValue(field, v, 'must be an integer'));
    out.set(k, milli);
  }
  return errs;
}

/** spec.hard, spec.scopes, spec.scopeSelector; status.hard and status.used quantities. */
export function validateResourceQuota(q: Obj): FieldError[] {
  const spec = isObj(q.spec) ? q.spec : {};
  const errs = quantityMapErrors(spec.hard, 'spec.hard');
  const scopes = Array.isArray(spec.scopes) ? spec.scopes : [];
  const named = new Set<string>();
  scopes.forEach((s, i) => {
    if (s === 'CrossNamespacePodAffinity') errs.push(forbiddenField(`spec.scopes[${i}]`, 'the CrossNamespacePodAffinity scope is not supported by this server'));
    else if (typeof s !== 'string' || !SCOPES.includes(s)) errs.push(notSupported(`spec.scopes[${i}]`, s, SCOPES));
    else named.add(s);
  });
  const sel = isObj(spec.scopeSelector) ? spec.scopeSelector : {};
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((e, i) => {
    const path = `spec.scopeSelector.matchExpressions[${i}]`;
    const r = isObj(e) ? e : {};
    if (r.scopeName === 'CrossNamespacePodAffinity') errs.push(forbiddenField(`${path}.scopeName`, 'the CrossNamespacePodAffinity scope is not supported by this server'));
    else if (typeof r.scopeName !== 'string' || !SCOPES.includes(r.scopeName)) errs.push(notSupported(`${path}.scopeName`, r.scopeName, SCOPES));
    else named.add(r.scopeName);
    const values = Array.isArray(r.values) ? r.values : [];
    if (typeof r.operator !== 'string' || !OPERATORS.includes(r.operator)) errs.push(notSupported(`${path}.operator`, r.operator, OPERATORS));
    else if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) errs.push(required(`${path}.values`, 'must be at least one value when `operator` is \'In\' or \'NotIn\' for scope selector'));
    else if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length) errs.push(invalidValue(`${path}.values`, values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    else if (r.scopeName !== 'PriorityClass' && (r.operator === 'In' || r.operator === 'NotIn')) errs.push(invalidValue(`${path}.operator`, r.operator, 'must be \'Exist\' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity'));
  });
  if ((named.has('Terminating') && named.has('NotTerminating')) || (named.has('BestEffort') && named.has('NotBestEffort'))) {
    errs.push(invalidValue('spec.scopes', [...named].sort(), 'conflicting scopes'));
  }
  // Scoped quotas count pods only; a resource no pod uses would never be counted.
  if (named.size) {
    const fits = named.has('BestEffort') ? (k: string) => k === 'pods' || k === 'count/pods' : isPodResource;
    for (const k of Object.keys(isObj(spec.hard) ? spec.hard : {})) {
      if (!fits(k)) errs.push(invalidValue('spec.hard', k, 'unsupported scope applied to resource'));
    }
  }
  const status = isObj(q.status) ? q.status : {};
  errs.push(...quantityMapErrors(status.hard, 'status.hard'), ...quantityMapErrors(status.used, 'status.used'));
  return errs;
}

const LIMIT_TYPES = ['Container', 'PersistentVolumeClaim', 'Pod'];

/** Upstream SetDefaults_LimitRangeItem: a Container item's default is its max, its defaultRequest its default, else its min. */
export function defaultLimitRange(lr: Obj): void {
  const limits = isObj(lr.spec) && Array.isArray(lr.spec.limits) ? lr.spec.limits : [];
  for (const item of limits) {
    if (!isObj(item) || item.type !== 'Container') continue;
    const def = (isObj(item.default) ? item.default : {}) as Record<string, unknown>;
    const req = (isObj(item.defaultRequest) ? item.defaultRequest : {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(isObj(item.max) ? item.max : {})) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
    for (const [k, v] of Object.entries(isObj(item.min) ? item.min : {})) if (!(k in req)) req[k] = v;
    if (Object.keys(def).length) item.default = def;
    if (Object.keys(req).length) item.defaultRequest = req;
  }
}

/** Types, quantities, and min ≤ defaultRequest ≤ default ≤ max, ratio ≥ 1 (upstream ValidateLimitRange). */
export function validateLimitRange(lr: Obj): FieldError[] {
  const spec = isObj(lr.spec) ? lr.spec : {};
  if (!Array.isArray(spec.limits)) return [required('spec.limits')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  spec.limits.forEach((raw, i) => {
    const path = `spec.limits[${i}]`;
    const item = isObj(raw) ? raw : {};
    if (typeof item.type !== 'string' || !LIMIT_TYPES.includes(item.type)) {
      errs.push(notSupported(`${path}.type`, item.type, LIMIT_TYPES));
      return;
    }
    if (seen.has(item.type)) errs.push({ type: 'FieldValueDuplicate', field: `${path}.type`, message: `Duplicate value: ${JSON.stringify(item.type)}` });
    seen.add(item.type);
    const [max, min, def, defReq, ratio] = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
    errs.push(
      ...quantityMapErrors(item.max, `${path}.max`, max),
      ...quantityMapErrors(item.min, `${path}.min`, min),
      ...quantityMapErrors(item.default, `${path}.default`, def),
      ...quantityMapErrors(item.defaultRequest, `${path}.defaultRequest`, defReq),
      ...quantityMapErrors(item.maxLimitRequestRatio, `${path}.maxLimitRequestRatio`, ratio),
    );
    if (item.type !== 'Container') {
      if (def.size) errs.push(forbiddenField(`${path}.default`, `may not be specified when \`type\` is '${item.type}'`));
      if (defReq.size) errs.push(forbiddenField(`${path}.defaultRequest`, `may not be specified when \`type\` is '${item.type}'`));
    }
    if (item.type === 'PersistentVolumeClaim') {
      if (!min.has('storage') && !max.has('storage')) errs.push(required(`${path}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
      if (ratio.size) errs.push(forbiddenField(`${path}.maxLimitRequestRatio`, `may not be specified when \`type\` is '${item.type}'`));
    }
    const show = (m: unknown, k: string): string => String((m as Obj)[k]);
    for (const [k, lo] of min) {
      const hi = max.get(k);
      if (hi !== undefined && lo > hi) errs.push(invalidValue(`${path}.min[${k}]`, show(item.min, k), `min value ${show(item.min, k)} is greater than max value ${show(item.max, k)}`));
    }
    for (const [k, d] of defReq) {
      const lo = min.get(k);
      const hi = max.get(k);
      const dl = def.get(k);
      if (lo !== undefined && d < lo) errs.push(invalidValue(`${path}.defaultRequest[${k}]`, show(item.defaultRequest, k), `min value ${show(item.min, k)} is greater than default request value ${show(item.defaultRequest, k)}`));
      if (dl !== undefined && d > dl) errs.push(invalidValue(`${path}.defaultRequest[${k}]`, show(item.defaultRequest, k), `default request value ${show(item.defaultRequest, k)} is greater than default limit value ${show(item.default, k)}`));
      if (hi !== undefined && d > hi) errs.push(invalidValue(`${path}.defaultRequest[${k}]`, show(item.defaultRequest, k), `default request value ${show(item.defaultRequest, k)} is greater than max value ${show(item.max, k)}`));
    }
    for (const [k, d] of def) {
      const lo = min.get(k);
      const hi = max.get(k);
      if (lo !== undefined && d < lo) errs.push(invalidValue(`${path}.default[${k}]`, show(item.default, k), `min value ${show(item.min, k)} is greater than default value ${show(item.default, k)}`));
      if (hi !== undefined && d > hi) errs.push(invalidValue(`${path}.default[${k}]`, show(item.default, k), `default value ${show(item.default, k)} is greater than max value ${show(item.max, k)}`));
    }
    for (const [k, r] of ratio) {
      if (r < 1000) errs.push(invalidValue(`${path}.maxLimitRequestRatio[${k}]`, show(item.maxLimitRequestRatio, k), 'ratio must be greater than or equal to 1'));
    }
  });
  return errs;
}

/** The highest priority a user-defined PriorityClass may have (upstream HighestUserDefinablePriority). */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** The built-in classes kube-apiserver creates at startup (upstream SystemPriorityClasses). */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** Why `name`/`value`/`globalDefault` is not a built-in class (upstream IsKnownSystemPriorityClass), or undefined. */
function systemClassProblem(name: string, value: unknown, globalDefault: unknown): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (value !== known.value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault === true) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

/** The `system-` prefix, the user value limit, preemptionPolicy, and immutable value and policy. */
export function validatePriorityClass(pc: Obj, old?: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const name = isObj(pc.metadata) && typeof pc.metadata.name === 'string' ? pc.metadata.name : '';
  if (typeof pc.value !== 'number' || !Number.isInteger(pc.value) || pc.value < -2147483648 || pc.value > 2147483647) errs.push(invalidValue('value', pc.value, 'must be a 32-bit integer'));
  else if (name.startsWith('system-')) {
    const p = systemClassProblem(name, pc.value, pc.globalDefault);
    if (p) errs.push(forbiddenField('metadata.name', `priority class names with 'system-' prefix are reserved for system use only. error: ${p}`));
  } else if (pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(forbiddenField('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  const policies = ['Never', 'PreemptLowerPriority'];
  if (pc.preemptionPolicy !== undefined && !policies.includes(pc.preemptionPolicy as string)) errs.push(notSupported('preemptionPolicy', pc.preemptionPolicy, policies));
  if (old) {
    if (old.value !== pc.value) errs.push(forbiddenField('value', 'may not be changed in an update.'));
    if (old.preemptionPolicy !== pc.preemptionPolicy) errs.push(invalidValue('preemptionPolicy', pc.preemptionPolicy, 'field is immutable'));
  }
  return errs;
}
