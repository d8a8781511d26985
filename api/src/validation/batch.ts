/**
 * batch/v1 Job and CronJob validation (k8s.io/kubernetes/pkg/apis/batch/validation), minus the
 * schedule syntax, which the server checks with the same parser its CronJob controller uses.
 */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { validatePodSpec } from './pod.js';
import { selectorErrors } from './workloads.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function nonNegative(errs: FieldError[], v: unknown, field: string): void {
  if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < 0)) errs.push(invalidValue(field, v, 'must be greater than or equal to 0'));
}

const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];
const FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];

/** The one controller that runs Jobs here: a Job naming another is left for that one upstream. */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

/**
 * Job fields no part of this server acts on are refused rather than stored and ignored: the
 * per-index backoff (backoffLimitPerIndex, maxFailedIndexes), successPolicy, and managedBy naming
 * another controller (the built-in controller would run the Job anyway).
 */
function unsupportedJobFields(errs: FieldError[], spec: Obj, path: string): void {
  const set = (f: string): boolean => spec[f] !== undefined && spec[f] !== null;
  for (const f of ['backoffLimitPerIndex', 'maxFailedIndexes', 'successPolicy']) {
    if (set(f)) errs.push(forbiddenField(`${path}.${f}`, 'not supported by this server'));
  }
  if (set('managedBy') && spec.managedBy !== JOB_CONTROLLER_NAME) {
    errs.push(forbiddenField(`${path}.managedBy`, `not supported by this server: only ${JSON.stringify(JOB_CONTROLLER_NAME)} runs Jobs here`));
  }
}

/** The spec of a Job, or of a CronJob's job template (`isTemplate`: no selector generated yet). */
export function validateJobSpec(spec: unknown, path = 'spec', o: { isTemplate?: boolean } = {}): FieldError[] {
  if (!isObj(spec)) return [required(path)];
  const errs: FieldError[] = [];
  nonNegative(errs, spec.parallelism, `${path}.parallelism`);
  nonNegative(errs, spec.completions, `${path}.completions`);
  nonNegative(errs, spec.backoffLimit, `${path}.backoffLimit`);
  nonNegative(errs, spec.ttlSecondsAfterFinished, `${path}.ttlSecondsAfterFinished`);
  const ads = spec.activeDeadlineSeconds;
  if (ads !== undefined && ads !== null && (!Number.isInteger(ads) || (ads as number) <= 0)) errs.push(invalidValue(`${path}.activeDeadlineSeconds`, ads, 'must be greater than 0'));
  const mode = spec.completionMode;
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed') {
    if (spec.completions === undefined || spec.completions === null) errs.push(required(`${path}.completions`, 'Required value: when completion mode is Indexed'));
    else if ((spec.completions as number) > 100_000) errs.push(invalidValue(`${path}.completions`, spec.completions, 'must be less than or equal to 100000 when completion mode is Indexed'));
  }
  unsupportedJobFields(errs, spec, path);
  const template = spec.template;
  if (!isObj(template)) return [...errs, required(`${path}.template`)];
  const podSpec = template.spec as Obj | undefined;
  errs.push(...validatePodSpec(podSpec, `${path}.template.spec`));
  const restart = podSpec?.restartPolicy;
  if (isObj(podSpec) && !JOB_RESTART_POLICIES.includes(restart as string)) errs.push(notSupported(`${path}.template.spec.restartPolicy`, restart ?? '', JOB_RESTART_POLICIES));
  if (spec.podFailurePolicy !== undefined && spec.podFailurePolicy !== null) {
    const rules = (spec.podFailurePolicy as Obj).rules;
    if (restart !== 'Never') errs.push(invalidValue(`${path}.template.spec.restartPolicy`, restart, 'only "Never" is supported when podFailurePolicy is specified'));
    if (!Array.isArray(rules)) errs.push(required(`${path}.podFailurePolicy.rules`));
    else
      rules.forEach((r: unknown, i) => {
        const f = `${path}.podFailurePolicy.rules[${i}]`;
        if (!isObj(r)) return errs.push(invalidValue(f, r, 'must be an object'));
        if (!FAILURE_ACTIONS.includes(r.action as string)) errs.push(notSupported(`${f}.action`, r.action, FAILURE_ACTIONS));
        const has = (isObj(r.onExitCodes) ? 1 : 0) + (Array.isArray(r.onPodConditions) && r.onPodConditions.length ? 1 : 0);
        if (has !== 1) errs.push(invalidValue(f, 'onExitCodes/onPodConditions', 'specifying one of OnExitCodes and OnPodConditions is required'));
        if (isObj(r.onExitCodes)) {
          const ec = r.onExitCodes;
          if (ec.operator !== 'In' && ec.operator !== 'NotIn') errs.push(notSupported(`${f}.onExitCodes.operator`, ec.operator, ['In', 'NotIn']));
          if (!Array.isArray(ec.values) || ec.values.length === 0) errs.push(required(`${f}.onExitCodes.values`, 'Required value: at least one value is required'));
          else if (ec.operator === 'In' && ec.values.includes(0)) errs.push(invalidValue(`${f}.onExitCodes.values[${ec.values.indexOf(0)}]`, 0, 'must not be 0 for the In operator'));
        }
        return undefined;
      });
  }
  if (!o.isTemplate) {
    if (!isObj(spec.selector)) errs.push(required(`${path}.selector`));
    else errs.push(...selectorErrors(spec.selector, template, path));
  }
  return errs;
}

/** CronJob spec apart from the schedule's syntax; names are at most 52 characters (11 left for the Job suffix). */
export function validateCronJobSpec(spec: unknown, name: string | undefined, path = 'spec'): FieldError[] {
  const errs: FieldError[] = [];
  if (name && name.length > 52) errs.push(invalidValue('metadata.name', name, 'must be no more than 52 characters'));
  if (!isObj(spec)) return [...errs, required(path)];
  if (typeof spec.schedule !== 'string' || spec.schedule === '') errs.push(required(`${path}.schedule`));
  const cp = spec.concurrencyPolicy;
  if (cp !== undefined && !['Allow', 'Forbid', 'Replace'].includes(cp as string)) errs.push(notSupported(`${path}.concurrencyPolicy`, cp, ['Allow', 'Forbid', 'Replace']));
  nonNegative(errs, spec.startingDeadlineSeconds, `${path}.startingDeadlineSeconds`);
  nonNegative(errs, spec.successfulJobsHistoryLimit, `${path}.successfulJobsHistoryLimit`);
  nonNegative(errs, spec.failedJobsHistoryLimit, `${path}.failedJobsHistoryLimit`);
  const tz = spec.timeZone;
  if (tz !== undefined && tz !== null) {
    if (typeof tz !== 'string' || tz === '') errs.push(invalidValue(`${path}.timeZone`, tz, 'timeZone must be nil or non-empty string'));
    else if (!isKnownTimeZone(tz)) errs.push(invalidValue(`${path}.timeZone`, tz, `unknown time zone ${tz}`));
  }
  const jt = spec.jobTemplate;
  if (!isObj(jt)) errs.push(required(`${path}.jobTemplate`));
  else errs.push(...validateJobSpec(jt.spec, `${path}.jobTemplate.spec`, { isTemplate: true }));
  return errs;
}

/** An IANA zone name the runtime knows (Go's time.LoadLocation; `Local` is refused as upstream does). */
export function isKnownTimeZone(tz: string): boolean {
  if (tz === 'Local' || !/^[A-Za-z.\-_0-9+/]+$/.test(tz) || tz.split('/').some((p) => p === '' || p === '.' || p === '..' || p.startsWith('-'))) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Fields of a Job spec an update may not change (ValidateJobSpecUpdate), given whether the template may change. */
export function jobSpecUpdateErrors(spec: Obj, old: Obj, templateMutable: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  for (const f of ['selector', 'completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'manualSelector']) {
    if (!same(spec[f], old[f])) errs.push(invalidValue(`spec.${f}`, spec[f] ?? null, 'field is immutable'));
  }
  if (!same(spec.completions, old.completions) && !(spec.completionMode === 'Indexed' && spec.completions === spec.parallelism)) {
    errs.push(invalidValue('spec.completions', spec.completions ?? null, 'field is immutable'));
  }
  if (!templateMutable && !same(spec.template, old.template)) errs.push(invalidValue('spec.template', spec.template, 'field is immutable'));
  return errs;
}
