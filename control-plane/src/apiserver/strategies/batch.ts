/**
 * Strategies of batch/v1 Jobs and CronJobs (pkg/registry/batch/{job,cronjob}/strategy.go): the
 * Job's generated selector and labels, defaults, validation and update immutability; a CronJob's
 * schedule is checked with the parser its controller uses (cron/schedule.ts).
 */
import { defaultCronJobSpec, defaultJobSpec, invalidValue, jobSpecUpdateErrors, validateCronJobSpec, validateJobSpec, type FieldError } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { parseCronSchedule } from '../../cron/schedule.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';

/**
 * Upstream generateSelector: the template gets the job-name and controller-uid labels (new and
 * legacy keys, unless the user set them) and the selector matches on the controller-uid.
 */
export function generateJobSelector(job: ApiObject): void {
  const spec = job.spec as Json;
  const template = (spec.template ??= {}) as Json;
  const meta = (template.metadata ??= {}) as Json;
  const labels = (meta.labels ??= {}) as Record<string, string>;
  for (const k of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) labels[k] ??= job.metadata.name ?? '';
  for (const k of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) labels[k] ??= job.metadata.uid ?? '';
  const selector = (spec.selector ??= {}) as Json;
  const matchLabels = (selector.matchLabels ??= {}) as Record<string, string>;
  matchLabels[CONTROLLER_UID_LABEL] ??= job.metadata.uid ?? '';
}

export const jobStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultJobSpec(obj.spec, obj.metadata);
  },
  prepareForCreate(obj) {
    obj.status = {};
    if (isPlainObject(obj.spec) && obj.spec.manualSelector !== true) generateJobSelector(obj);
  },
  validate(obj, old) {
    const errs = validateJobSpec(obj.spec);
    if (old && isPlainObject(obj.spec) && isPlainObject(old.spec)) {
      const oldStatus = (old.status ?? {}) as Json;
      // A suspended Job that never started may still get a new template (scheduling directives).
      const templateMutable = old.spec.suspend === true && !oldStatus.startTime;
      errs.push(...jobSpecUpdateErrors(obj.spec, old.spec, templateMutable));
    }
    return errs;
  },
};

function scheduleErrors(obj: ApiObject, old?: ApiObject): FieldError[] {
  const spec = obj.spec as Json | undefined;
  const schedule = spec?.schedule;
  if (typeof schedule !== 'string' || schedule === '') return [];
  const errs: FieldError[] = [];
  try {
    parseCronSchedule(schedule);
  } catch (err) {
    if (!hasCode(err, 'ERR_INVALID_ARGUMENT')) throw err;
    errs.push(invalidValue('spec.schedule', schedule, (err as Error).message));
  }
  // A TZ prefix is refused on new objects; an object that already had one may keep it (ratchet).
  const allowTz = typeof (old?.spec as Json | undefined)?.schedule === 'string' && ((old!.spec as Json).schedule as string).includes('TZ');
  if (schedule.includes('TZ')) {
    if (!allowTz) errs.push(invalidValue('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
    else if (spec?.timeZone !== undefined) errs.push(invalidValue('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  }
  return errs;
}

export const cronJobStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultCronJobSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate(obj, old) {
    return [...validateCronJobSpec(obj.spec, obj.metadata.name), ...scheduleErrors(obj, old)];
  },
};
