/**
 * autoscaling/v2 HorizontalPodAutoscaler validation and defaults, with upstream's field paths
 * and messages (pkg/apis/autoscaling/validation, pkg/apis/autoscaling/v2/defaults.go).
 */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { pathSegmentNameProblem } from './names.js';
import { parseQuantity } from '../quantity.js';
import type { HPAScalingRules } from '../types/autoscaling.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Stabilization windows above an hour and policy periods above 30 minutes are refused, as upstream. */
const MAX_STABILIZATION_SECONDS = 3600;
const MAX_PERIOD_SECONDS = 1800;
/** The metric an autoscaler without metrics gets: 80 % average CPU utilization. */
const DEFAULT_CPU_UTILIZATION = 80;

/** Upstream's default scale-up rules: no stabilization, the larger of 4 pods and 100 % per 15 s. */
export function defaultScaleUpRules(): Required<HPAScalingRules> {
  return { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** Upstream's default scale-down rules: 300 s stabilization, 100 % per 15 s. */
export function defaultScaleDownRules(): Required<HPAScalingRules> {
  return { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** Fills an unset rule field from the direction's defaults (a rule that is given is kept whole). */
function fillRules(rules: unknown, defaults: Required<HPAScalingRules>): Obj {
  const r: Obj = isObj(rules) ? rules : {};
  r.stabilizationWindowSeconds ??= defaults.stabilizationWindowSeconds;
  r.selectPolicy ??= defaults.selectPolicy;
  r.policies ??= defaults.policies;
  return r;
}

/** Defaults in place: minReplicas 1, 80 % CPU when no metric is given, and a given behavior's unset parts. */
export function defaultHorizontalPodAutoscaler(hpa: Obj): void {
  if (!isObj(hpa.spec)) return;
  const spec = hpa.spec;
  spec.minReplicas ??= 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  // Upstream fills the behavior only when the user gave one; the controller uses the same defaults otherwise.
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = fillRules(spec.behavior.scaleUp, defaultScaleUpRules());
    spec.behavior.scaleDown = fillRules(spec.behavior.scaleDown, defaultScaleDownRules());
  }
}

function crossVersionRefErrors(ref: unknown, path: string): FieldError[] {
  const r = isObj(ref) ? ref : {};
  const errs: FieldError[] = [];
  for (const key of ['kind', 'name']) {
    const v = r[key];
    if (typeof v !== 'string' || v === '') {
      errs.push(required(`${path}.${key}`));
      continue;
    }
    const p = pathSegmentNameProblem(v);
    if (p) errs.push(invalidValue(`${path}.${key}`, v, p));
  }
  return errs;
}

function positiveQuantityErrors(v: unknown, path: string): FieldError[] {
  if (v === undefined || v === null) return [];
  let n: number;
  try {
    n = parseQuantity(String(v));
  } catch {
    return [invalidValue(path, v, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")];
  }
  return n > 0 ? [] : [invalidValue(path, v, 'must be positive')];
}

function metricTargetErrors(t: unknown, path: string): FieldError[] {
  const mt = isObj(t) ? t : {};
  const errs: FieldError[] = [];
  if (typeof mt.type !== 'string' || mt.type === '') errs.push(required(`${path}.type`, 'Required value: must specify a metric target type'));
  else if (!['Utilization', 'Value', 'AverageValue'].includes(mt.type)) errs.push(invalidValue(`${path}.type`, mt.type, 'must be either Utilization, Value, or AverageValue'));
  if (mt.averageUtilization !== undefined && !(isInt(mt.averageUtilization) && mt.averageUtilization >= 1)) {
    errs.push(invalidValue(`${path}.averageUtilization`, mt.averageUtilization, 'must be greater than 0'));
  }
  errs.push(...positiveQuantityErrors(mt.value, `${path}.value`), ...positiveQuantityErrors(mt.averageValue, `${path}.averageValue`));
  return errs;
}

/** Resource and ContainerResource sources: a name, and exactly one of averageUtilization and averageValue. */
function resourceSourceErrors(src: Obj, path: string, container: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof src.name !== 'string' || src.name === '') errs.push(required(`${path}.name`, 'Required value: must specify a resource name'));
  if (container && (typeof src.container !== 'string' || src.container === '')) errs.push(required(`${path}.container`, 'Required value: must specify a container'));
  const t = isObj(src.target) ? src.target : {};
  errs.push(...metricTargetErrors(src.target, `${path}.target`));
  if (t.averageUtilization === undefined && t.averageValue === undefined) {
    errs.push(required(`${path}.target.averageUtilization`, 'Required value: must set either a target raw value or a target utilization'));
  }
  if (t.averageUtilization !== undefined && t.averageValue !== undefined) {
    errs.push(forbiddenField(`${path}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
  }
  return errs;
}

/** Pods, Object and External sources: a metric name and a target. */
function customSourceErrors(src: Obj, path: string, isObject: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const metric = isObj(src.metric) ? src.metric : {};
  if (typeof metric.name !== 'string' || metric.name === '') errs.push(required(`${path}.metric.name`, 'Required value: must specify a metric name'));
  if (isObject) errs.push(...crossVersionRefErrors(src.describedObject, `${path}.describedObject`));
  errs.push(...metricTargetErrors(src.target, `${path}.target`));
  return errs;
}

const SOURCE_FIELDS: Readonly<Record<string, string>> = { Resource: 'resource', ContainerResource: 'containerResource', Pods: 'pods', Object: 'object', External: 'external' };

function metricSpecErrors(m: unknown, path: string): FieldError[] {
  const spec = isObj(m) ? m : {};
  const errs: FieldError[] = [];
  if (typeof spec.type !== 'string' || spec.type === '') errs.push(required(`${path}.type`, 'Required value: must specify a metric source type'));
  else if (!Object.hasOwn(SOURCE_FIELDS, spec.type)) errs.push(notSupported(`${path}.type`, spec.type, Object.keys(SOURCE_FIELDS).sort()));
  const present = Object.values(SOURCE_FIELDS).filter((f) => spec[f] !== undefined && spec[f] !== null);
  const expected = typeof spec.type === 'string' && Object.hasOwn(SOURCE_FIELDS, spec.type) ? SOURCE_FIELDS[spec.type]! : undefined;
  if (expected && !present.includes(expected)) errs.push(required(`${path}.${expected}`, 'Required value: must populate information for the given metric source'));
  for (const f of present) {
    if (f !== expected) {
      errs.push(forbiddenField(`${path}.${f}`, 'must populate the given metric source only'));
      continue;
    }
    const src = isObj(spec[f]) ? (spec[f] as Obj) : {};
    if (f === 'resource' || f === 'containerResource') errs.push(...resourceSourceErrors(src, `${path}.${f}`, f === 'containerResource'));
    else errs.push(...customSourceErrors(src, `${path}.${f}`, f === 'object'));
  }
  return errs;
}

function scalingRulesErrors(r: unknown, path: string): FieldError[] {
  if (r === undefined || r === null) return [];
  const rules = isObj(r) ? r : {};
  const errs: FieldError[] = [];
  const w = rules.stabilizationWindowSeconds;
  if (w !== undefined && w !== null) {
    if (!isInt(w) || w < 0) errs.push(invalidValue(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to 0'));
    else if (w > MAX_STABILIZATION_SECONDS) errs.push(invalidValue(`${path}.stabilizationWindowSeconds`, w, `must be less than or equal to ${MAX_STABILIZATION_SECONDS}`));
  }
  if (rules.selectPolicy !== undefined && !['Max', 'Min', 'Disabled'].includes(String(rules.selectPolicy))) {
    errs.push(notSupported(`${path}.selectPolicy`, rules.selectPolicy, ['Disabled', 'Max', 'Min']));
  }
  const policies = Array.isArray(rules.policies) ? rules.policies : [];
  if (policies.length === 0) errs.push(required(`${path}.policies`, 'Required value: must specify at least one Policy'));
  policies.forEach((p: unknown, i) => {
    const pp = `${path}.policies[${i}]`;
    const pol = isObj(p) ? p : {};
    if (pol.type !== 'Pods' && pol.type !== 'Percent') errs.push(notSupported(`${pp}.type`, pol.type, ['Percent', 'Pods']));
    if (!isInt(pol.value) || pol.value <= 0) errs.push(invalidValue(`${pp}.value`, pol.value, 'must be greater than zero'));
    if (!isInt(pol.periodSeconds) || pol.periodSeconds <= 0) errs.push(invalidValue(`${pp}.periodSeconds`, pol.periodSeconds, 'must be greater than zero'));
    else if (pol.periodSeconds > MAX_PERIOD_SECONDS) errs.push(invalidValue(`${pp}.periodSeconds`, pol.periodSeconds, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  return errs;
}

/** Spec errors of a (defaulted) HorizontalPodAutoscaler. */
export function validateHorizontalPodAutoscaler(hpa: Obj): FieldError[] {
  const spec = isObj(hpa.spec) ? hpa.spec : {};
  const errs: FieldError[] = [];
  const min = spec.minReplicas;
  const max = spec.maxReplicas;
  if (min !== undefined && !(isInt(min) && min >= 1)) errs.push(invalidValue('spec.minReplicas', min, 'must be greater than 0'));
  if (!isInt(max) || max < 1) errs.push(invalidValue('spec.maxReplicas', max, 'must be greater than 0'));
  else if (isInt(min) && max < min) errs.push(invalidValue('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...crossVersionRefErrors(spec.scaleTargetRef, 'spec.scaleTargetRef'));
  (Array.isArray(spec.metrics) ? spec.metrics : []).forEach((m: unknown, i) => errs.push(...metricSpecErrors(m, `spec.metrics[${i}]`)));
  const behavior = isObj(spec.behavior) ? spec.behavior : {};
  errs.push(...scalingRulesErrors(behavior.scaleUp, 'spec.behavior.scaleUp'), ...scalingRulesErrors(behavior.scaleDown, 'spec.behavior.scaleDown'));
  return errs;
}

/** Status errors: replica counts are never negative. */
export function validateHorizontalPodAutoscalerStatus(hpa: Obj): FieldError[] {
  const status = isObj(hpa.status) ? hpa.status : {};
  const errs: FieldError[] = [];
  for (const key of ['currentReplicas', 'desiredReplicas']) {
    const v = status[key];
    if (v !== undefined && !(isInt(v) && v >= 0)) errs.push(invalidValue(`status.${key}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}
