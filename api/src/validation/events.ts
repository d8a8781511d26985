/**
 * Strict validation of Events written through events.k8s.io/v1 (pkg/apis/core/validation/events.go
 * ValidateEventCreate/Update for a non-core request version), on the Event's core form: the field
 * paths are upstream's (internal names such as `message`, `count`, `source`, except
 * `reportingController`).
 */
import { invalidValue, required, type FieldError } from './field-error.js';
import { qualifiedNameProblem } from './names.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const LIMITS: ReadonlyArray<readonly [string, number]> = [['reportingInstance', 128], ['action', 128], ['reason', 128]];

function seriesErrors(e: Obj): FieldError[] {
  if (!isObj(e.series)) return [];
  const errs: FieldError[] = [];
  if (!(typeof e.series.count === 'number' && e.series.count >= 2)) errs.push(invalidValue('series.count', '', 'should be at least 2'));
  if (!e.series.lastObservedTime) errs.push(required('series.lastObservedTime'));
  return errs;
}

/** An events.k8s.io/v1 Event (in core form) on create. */
export function validateEventsV1Create(e: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const ns = isObj(e.metadata) ? str(e.metadata.namespace) : '';
  const involvedNs = isObj(e.involvedObject) ? str(e.involvedObject.namespace) : '';
  if (!involvedNs && ns !== 'default' && ns !== 'kube-system' && e.eventTime) errs.push(invalidValue('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  const controller = str(e.reportingComponent);
  if (!controller) errs.push(required('reportingController'));
  else {
    const p = qualifiedNameProblem(controller);
    if (p) errs.push(invalidValue('reportingController', controller, p));
  }
  for (const [k, max] of LIMITS) {
    if (!str(e[k])) errs.push(required(k));
    else if (str(e[k]).length > max) errs.push(invalidValue(k, '', `can have at most ${max} characters`));
  }
  if (str(e.message).length > 1024) errs.push(invalidValue('message', '', 'can have at most 1024 characters'));
  errs.push(...seriesErrors(e));
  if (!e.eventTime) errs.push(required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(invalidValue('type', '', `has invalid value: ${str(e.type)}`));
  if (e.firstTimestamp) errs.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (e.lastTimestamp) errs.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (e.count) errs.push(invalidValue('count', '', 'needs to be unset'));
  if (isObj(e.source) && (str(e.source.component) || str(e.source.host))) errs.push(invalidValue('source', '', 'needs to be unset'));
  return errs;
}

const IMMUTABLE: ReadonlyArray<readonly [string, string]> = [
  ['involvedObject', 'involvedObject'], ['reason', 'reason'], ['message', 'message'], ['source', 'source'], ['firstTimestamp', 'firstTimestamp'],
  ['lastTimestamp', 'lastTimestamp'], ['count', 'count'], ['type', 'type'], ['eventTime', 'eventTime'], ['action', 'action'], ['related', 'related'],
  ['reportingComponent', 'reportingController'], ['reportingInstance', 'reportingInstance'],
];

/** An events.k8s.io/v1 Event (in core form) on update: only the series and metadata may change. */
export function validateEventsV1Update(e: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = JSON.stringify(e.series) !== JSON.stringify(old.series) ? seriesErrors(e) : [];
  for (const [k, path] of IMMUTABLE) {
    if (JSON.stringify(e[k] ?? null) !== JSON.stringify(old[k] ?? null)) errs.push(invalidValue(path, e[k] ?? null, 'field is immutable'));
  }
  return errs;
}
