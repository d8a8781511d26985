/**
 * The options of a request, read from its query as kube-apiserver's parameter codec reads them
 * (booleans and integers: `@nodelet/api` query-params.ts) and validated as its handlers do:
 * CreateOptions/UpdateOptions/PatchOptions (dryRun, fieldManager, fieldValidation) and
 * ListOptions (resourceVersion, resourceVersionMatch). A value of the wrong type is a 400 with the
 * converter's message; a value its validation refuses is a 422 naming the options kind:
 *
 *   ?dryRun=all           422 `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"all"}: supported values: "All"`
 *   ?limit=ten            400 `strconv.ParseInt: parsing "ten": invalid syntax`
 *   ?resourceVersion=abc  400 `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
 */
import { forbiddenField, notSupported, parseGoUint64, QueryParamError, queryInt, queryOptionalBool, type FieldError } from '@nodelet/api';
import { badRequest, invalid, type StatusError } from './status.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Options of a create, update or patch. */
export interface WriteOptions {
  /** `dryRun=All`: admitted and validated in full, nothing persisted, no watch event. */
  dryRun: boolean;
  fieldManager: string | undefined;
  fieldValidation: FieldValidation;
  /** Server-side apply's `force`: take fields other managers own instead of a 409 conflict. */
  force: boolean;
}

/** 422 for options the server refuses, as upstream names them (`CreateOptions.meta.k8s.io ""`). */
export function optionsInvalid(kind: string, errs: FieldError[]): StatusError {
  return invalid(kind, 'meta.k8s.io', '', errs.map((e) => ({ reason: e.type, message: e.message, field: e.field })));
}

/** Go's `%#v` of a []string, which upstream's NotSupported prints for dryRun. */
const goStringSlice = (values: readonly string[]): string => `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

/** Only `All` is a dry-run stage (ValidateDryRun); any other value, even empty, is refused. */
export function dryRunErrors(values: readonly string[]): FieldError[] {
  if (values.every((v) => v === 'All')) return [];
  return [{ type: 'FieldValueNotSupported', field: 'dryRun', message: `Unsupported value: ${goStringSlice(values)}: supported values: "All"` }];
}

/** Upstream's FieldManagerMaxLength. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
export function fieldManagerErrors(manager: string, field = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push({ type: 'FieldValueTooLong', field, message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes` });
  }
  let offset = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push({ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(manager)}: invalid character U+${code} (at position ${offset})` });
    }
    offset += Buffer.byteLength(ch);
  }
  return errs;
}

const FIELD_VALIDATIONS: readonly string[] = ['Ignore', 'Strict', 'Warn'];

/**
 * The options of a create (`CreateOptions`), update (`UpdateOptions`) or patch (`PatchOptions`,
 * with `apply` true for server-side apply, which needs a fieldManager). Throws 422 when upstream's
 * validation of them fails. An unset fieldValidation is Warn, as upstream's default.
 */
export function writeOptionsOf(url: URL, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', apply = false): WriteOptions {
  const q = url.searchParams;
  const errs: FieldError[] = [];
  const force = queryOptionalBool(q, 'force');
  const manager = q.get('fieldManager') ?? '';
  if (kind === 'PatchOptions' && !apply && force !== undefined) errs.push(forbiddenField('force', 'may not be specified for non-apply patch'));
  if (kind === 'PatchOptions' && apply && manager === '') errs.push({ type: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' });
  errs.push(...fieldManagerErrors(manager));
  const dryRun = q.getAll('dryRun');
  errs.push(...dryRunErrors(dryRun));
  const validation = q.get('fieldValidation') ?? '';
  if (validation !== '' && !FIELD_VALIDATIONS.includes(validation)) errs.push(notSupported('fieldValidation', validation, ['', ...FIELD_VALIDATIONS]));
  if (errs.length) throw optionsInvalid(kind, errs);
  return { dryRun: dryRun.length > 0, fieldManager: manager || undefined, fieldValidation: (validation || 'Warn') as FieldValidation, force: force ?? false };
}

/**
 * A resourceVersion as storage parses it (`ParseUint`); "" and "0" are 0. Not a number → 400
 * with upstream's message.
 */
export function parseResourceVersion(rv: string): number {
  if (rv === '' || rv === '0') return 0;
  try {
    return parseGoUint64(rv, 'resourceVersion');
  } catch (err) {
    if (!(err instanceof QueryParamError)) throw err;
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${err.message}`);
  }
}

/** The options of a list or watch that the handlers use, parsed and validated (ValidateListOptions). */
export interface ListOptions {
  resourceVersion: string;
  /** {@link resourceVersion} as a number (0 when unset). */
  revision: number;
  resourceVersionMatch: string;
  continueToken: string;
  limit: number;
  timeoutSeconds: number | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
}

export function listOptionsOf(url: URL, watch: boolean): ListOptions {
  const q = url.searchParams;
  const rv = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const cont = q.get('continue') ?? '';
  const limit = queryInt(q, 'limit') ?? 0;
  const timeoutSeconds = queryInt(q, 'timeoutSeconds');
  const allowWatchBookmarks = queryOptionalBool(q, 'allowWatchBookmarks') ?? false;
  const sendInitialEvents = queryOptionalBool(q, 'sendInitialEvents');
  const errs: FieldError[] = [];
  if (watch) {
    if (sendInitialEvents !== undefined && match !== 'NotOlderThan') errs.push(forbiddenField('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (match) {
      if (sendInitialEvents === undefined) errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (cont) errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  } else {
    if (match) {
      if (!rv) errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      if (cont) errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && rv === '0') errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
    if (sendInitialEvents !== undefined) errs.push(forbiddenField('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (errs.length) throw optionsInvalid('ListOptions', errs);
  return { resourceVersion: rv, revision: parseResourceVersion(rv), resourceVersionMatch: match, continueToken: cont, limit, timeoutSeconds, allowWatchBookmarks, sendInitialEvents };
}
