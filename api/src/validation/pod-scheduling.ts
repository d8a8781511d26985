/**
 * Validation of the pod fields the scheduler acts on beyond node selection — pod (anti-)affinity,
 * topologySpreadConstraints and schedulingGates — with upstream's field paths and messages
 * (pkg/apis/core/validation: validatePodAffinity, validateTopologySpreadConstraints,
 * validateSchedulingGates). A value the scheduler could not honour is refused here instead.
 */
import { duplicate, forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { dns1123LabelProblem, qualifiedNameProblem } from './names.js';
import { labelSelectorErrors } from './policy.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const NOT_POSITIVE = 'must be greater than zero';
const ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];
const NODE_POLICIES = ['Honor', 'Ignore'];

function topologyKeyErrors(key: unknown, path: string): FieldError[] {
  if (typeof key !== 'string' || key === '') return [required(path, 'Required value: can not be empty')];
  const p = qualifiedNameProblem(key);
  return p ? [invalidValue(path, key, p)] : [];
}

/** Keys a selector constrains (matchLabels and matchExpressions). */
function selectorKeys(sel: unknown): Set<string> {
  const keys = new Set<string>();
  if (!isObj(sel)) return keys;
  if (isObj(sel.matchLabels)) for (const k of Object.keys(sel.matchLabels)) keys.add(k);
  for (const e of list(sel.matchExpressions)) if (isObj(e) && typeof e.key === 'string') keys.add(e.key);
  return keys;
}

function labelKeyListErrors(keys: unknown, sel: unknown, path: string): FieldError[] {
  if (keys === undefined || keys === null) return [];
  if (!Array.isArray(keys)) return [invalidValue(path, keys, 'must be a list')];
  if (keys.length > 0 && (sel === undefined || sel === null)) return [forbiddenField(path, 'must not be specified when labelSelector is not set')];
  const inSelector = selectorKeys(sel);
  const errs: FieldError[] = [];
  keys.forEach((k, i) => {
    const p = typeof k === 'string' ? qualifiedNameProblem(k) : 'must be a string';
    if (p) errs.push(invalidValue(`${path}[${i}]`, k, p));
    else if (inSelector.has(k as string)) errs.push(invalidValue(`${path}[${i}]`, k, 'exists in both matchLabelKeys and labelSelector'));
  });
  return errs;
}

function affinityTermErrors(t: unknown, path: string): FieldError[] {
  if (!isObj(t)) return [invalidValue(path, t, 'must be an object')];
  const errs = [...topologyKeyErrors(t.topologyKey, `${path}.topologyKey`), ...labelSelectorErrors(t.labelSelector, `${path}.labelSelector`), ...labelSelectorErrors(t.namespaceSelector, `${path}.namespaceSelector`)];
  list(t.namespaces).forEach((n, i) => {
    const p = typeof n === 'string' ? dns1123LabelProblem(n) : 'must be a string';
    if (p) errs.push(invalidValue(`${path}.namespaces[${i}]`, n, p));
  });
  errs.push(...labelKeyListErrors(t.matchLabelKeys, t.labelSelector, `${path}.matchLabelKeys`));
  errs.push(...labelKeyListErrors(t.mismatchLabelKeys, t.labelSelector, `${path}.mismatchLabelKeys`));
  return errs;
}

function podAffinityErrors(a: unknown, path: string): FieldError[] {
  if (a === undefined || a === null) return [];
  if (!isObj(a)) return [invalidValue(path, a, 'must be an object')];
  const errs: FieldError[] = [];
  const req = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
  list(a.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => errs.push(...affinityTermErrors(t, `${req}[${i}]`)));
  const pref = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  list(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((w, i) => {
    const p = `${pref}[${i}]`;
    const x = isObj(w) ? w : {};
    if (typeof x.weight !== 'number' || !Number.isInteger(x.weight) || x.weight <= 0 || x.weight > 100) errs.push(invalidValue(`${p}.weight`, x.weight, 'must be in the range 1-100'));
    errs.push(...affinityTermErrors(x.podAffinityTerm, `${p}.podAffinityTerm`));
  });
  return errs;
}

function spreadErrors(cs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list(cs).forEach((c, i) => {
    const p = `${path}[${i}]`;
    const x = isObj(c) ? c : {};
    if (typeof x.maxSkew !== 'number' || !Number.isInteger(x.maxSkew) || x.maxSkew <= 0) errs.push(invalidValue(`${p}.maxSkew`, x.maxSkew, NOT_POSITIVE));
    errs.push(...topologyKeyErrors(x.topologyKey, `${p}.topologyKey`));
    if (!ACTIONS.includes(x.whenUnsatisfiable as string)) errs.push(notSupported(`${p}.whenUnsatisfiable`, x.whenUnsatisfiable, ACTIONS));
    if (x.minDomains !== undefined && x.minDomains !== null) {
      if (typeof x.minDomains !== 'number' || !Number.isInteger(x.minDomains) || x.minDomains <= 0) errs.push(invalidValue(`${p}.minDomains`, x.minDomains, NOT_POSITIVE));
      else if (x.whenUnsatisfiable !== 'DoNotSchedule') {
        errs.push(invalidValue(`${p}.minDomains`, x.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${String(x.whenUnsatisfiable)}`));
      }
    }
    for (const k of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      if (x[k] !== undefined && x[k] !== null && !NODE_POLICIES.includes(x[k] as string)) errs.push(notSupported(`${p}.${k}`, x[k], NODE_POLICIES));
    }
    const pair = `{${String(x.topologyKey)}, ${String(x.whenUnsatisfiable)}}`;
    if (seen.has(pair)) errs.push(duplicate(p, pair));
    seen.add(pair);
    errs.push(...labelSelectorErrors(x.labelSelector, `${p}.labelSelector`));
    errs.push(...labelKeyListErrors(x.matchLabelKeys, x.labelSelector, `${p}.matchLabelKeys`));
  });
  return errs;
}

function gateErrors(gates: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list(gates).forEach((g, i) => {
    const name = isObj(g) ? g.name : undefined;
    const p = typeof name === 'string' ? qualifiedNameProblem(name) : 'must be a string';
    if (p) errs.push(invalidValue(`${path}[${i}]`, name, p));
    else if (seen.has(name as string)) errs.push(duplicate(`${path}[${i}]`, name));
    seen.add(name as string);
  });
  return errs;
}

/** Errors in `spec.affinity.podAffinity/podAntiAffinity`, `spec.topologySpreadConstraints` and `spec.schedulingGates`. */
export function validatePodScheduling(spec: Obj, path: string): FieldError[] {
  const aff = isObj(spec.affinity) ? spec.affinity : {};
  return [
    ...podAffinityErrors(aff.podAffinity, `${path}.affinity.podAffinity`),
    ...podAffinityErrors(aff.podAntiAffinity, `${path}.affinity.podAntiAffinity`),
    ...spreadErrors(spec.topologySpreadConstraints, `${path}.topologySpreadConstraints`),
    ...gateErrors(spec.schedulingGates, `${path}.schedulingGates`),
  ];
}
