/**
 * PodDisruptionBudget (policy/v1) and RuntimeClass (node.k8s.io/v1) validation, with upstream's
 * field paths and messages (pkg/apis/policy/validation, pkg/apis/node/validation).
 */
import { dns1123LabelProblem, labelValueProblem, qualifiedNameProblem } from './names.js';
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { parseQuantity } from '../quantity.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const PERCENT = /^[0-9]+%$/;
const PERCENT_MESSAGE = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** An IntOrString that is a non-negative int or a percentage of at most 100 % (ValidatePositiveIntOrPercent + IsNotMoreThan100Percent). */
function intOrPercentErrors(v: unknown, field: string): FieldError[] {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? [] : [invalidValue(field, v, 'must be greater than or equal to 0')];
  if (typeof v !== 'string' || !PERCENT.test(v)) return [invalidValue(field, v, PERCENT_MESSAGE)];
  return Number(v.slice(0, -1)) > 100 ? [invalidValue(field, v, 'must not be greater than 100%')] : [];
}

/** A metav1.LabelSelector (ValidateLabelSelector): keys, values and operators. */
export function labelSelectorErrors(sel: unknown, path: string): FieldError[] {
  if (sel === undefined || sel === null) return [];
  if (!isObj(sel)) return [invalidValue(path, sel, 'must be an object')];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(isObj(sel.matchLabels) ? sel.matchLabels : {})) {
    const kp = qualifiedNameProblem(k);
    if (kp) errs.push(invalidValue(`${path}.matchLabels`, k, kp));
    const vp = typeof v === 'string' ? labelValueProblem(v) : 'must be a string';
    if (vp) errs.push(invalidValue(`${path}.matchLabels`, v, vp));
  }
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((e: unknown, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    const x = isObj(e) ? e : {};
    const values = Array.isArray(x.values) ? x.values : [];
    if (x.operator === 'In' || x.operator === 'NotIn') {
      if (values.length === 0) errs.push(required(`${p}.values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (x.operator === 'Exists' || x.operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbiddenField(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(invalidValue(`${p}.operator`, x.operator, 'not a valid selector operator'));
    }
    const kp = typeof x.key === 'string' ? qualifiedNameProblem(x.key) : 'must be a string';
    if (kp) errs.push(invalidValue(`${p}.key`, x.key, kp));
  });
  return errs;
}

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

export function validatePodDisruptionBudgetSpec(spec: unknown, path = 'spec'): FieldError[] {
  if (spec === undefined) return [];
  if (!isObj(spec)) return [invalidValue(path, spec, 'must be an object')];
  const errs: FieldError[] = [];
  const has = (k: string): boolean => spec[k] !== undefined && spec[k] !== null;
  if (has('minAvailable') && has('maxUnavailable')) errs.push(invalidValue(path, spec, 'minAvailable and maxUnavailable cannot be both set'));
  if (has('minAvailable')) errs.push(...intOrPercentErrors(spec.minAvailable, `${path}.minAvailable`));
  if (has('maxUnavailable')) errs.push(...intOrPercentErrors(spec.maxUnavailable, `${path}.maxUnavailable`));
  errs.push(...labelSelectorErrors(spec.selector, `${path}.selector`));
  if (has('unhealthyPodEvictionPolicy') && !EVICTION_POLICIES.includes(spec.unhealthyPodEvictionPolicy as string)) {
    errs.push(notSupported(`${path}.unhealthyPodEvictionPolicy`, spec.unhealthyPodEvictionPolicy, EVICTION_POLICIES));
  }
  return errs;
}

export function validatePodDisruptionBudgetStatus(status: unknown, path = 'status'): FieldError[] {
  if (!isObj(status)) return [];
  const errs: FieldError[] = [];
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) {
    const v = status[f];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < 0)) errs.push(invalidValue(`${path}.${f}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** handler (a DNS label), overhead quantities, scheduling nodeSelector and tolerations. */
export function validateRuntimeClass(rc: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof rc.handler !== 'string' || rc.handler === '') errs.push(required('handler'));
  else {
    const p = dns1123LabelProblem(rc.handler);
    if (p) errs.push(invalidValue('handler', rc.handler, p));
  }
  const podFixed = isObj(rc.overhead) && isObj(rc.overhead.podFixed) ? rc.overhead.podFixed : {};
  for (const [name, q] of Object.entries(podFixed)) {
    const field = `overhead.podFixed[${name}]`;
    try {
      if (parseQuantity(String(q)) < 0) errs.push(invalidValue(field, q, 'must be greater than or equal to 0'));
    } catch {
      errs.push(invalidValue(field, q, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
    }
  }
  const scheduling = isObj(rc.scheduling) ? rc.scheduling : {};
  for (const [k, v] of Object.entries(isObj(scheduling.nodeSelector) ? scheduling.nodeSelector : {})) {
    const kp = qualifiedNameProblem(k);
    if (kp) errs.push(invalidValue('scheduling.nodeSelector', k, kp));
    const vp = typeof v === 'string' ? labelValueProblem(v) : 'must be a string';
    if (vp) errs.push(invalidValue('scheduling.nodeSelector', v, vp));
  }
  const tolerations = Array.isArray(scheduling.tolerations) ? scheduling.tolerations : [];
  tolerations.forEach((t: unknown, i) => {
    const x = isObj(t) ? t : {};
    const p = `scheduling.tolerations[${i}]`;
    if (x.operator !== undefined && x.operator !== 'Exists' && x.operator !== 'Equal') errs.push(notSupported(`${p}.operator`, x.operator, ['Equal', 'Exists']));
    if (x.operator === 'Exists' && x.value) errs.push(invalidValue(`${p}.operator`, x.operator, 'value must be empty when `operator` is \'Exists\''));
    if (x.effect !== undefined && x.effect !== '' && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(x.effect as string)) {
      errs.push(notSupported(`${p}.effect`, x.effect, ['NoExecute', 'NoSchedule', 'PreferNoSchedule']));
    }
  });
  return errs;
}
