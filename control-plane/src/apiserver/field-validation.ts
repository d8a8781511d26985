/**
 * `fieldValidation=Strict|Warn|Ignore`: fields of an object that its kind's schema does not
 * declare, found with the schemas `/openapi/v3` publishes (`@nodelet/api` schema modules), at every
 * depth. Whatever the mode, such a field is never stored: it is dropped, as decoding into
 * kube-apiserver's typed objects drops it (a stored unknown field would also end every protobuf
 * watch of its kind). kubectl sends Strict by default, so `sepc:` or
 * `spec.template.spec.containers[0].imagePullPolice` is refused with kube-apiserver's message;
 * Warn (the default) answers with `Warning` headers kubectl prints.
 *
 *   create / update     400 `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`
 *   json/merge/strategic 400 `strict decoding error: unknown field "spec.foo"` (checked on the patched object)
 *   apply (any mode)    400 `failed to create typed patch object (ns/name; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema`
 */
import type { ServerResponse } from 'node:http';
import { applyFieldErrorsOfKind, unknownFieldsOfKind } from '@nodelet/api';
import type { FieldValidation } from './request-options.js';
import { badRequest, invalid } from './status.js';

/** The kind a body is checked as. */
export interface BodyKind {
  group: string;
  version: string;
  kind: string;
}

/** Adds `Warning` header values to those already set on the reply (admission may have set some). */
export function addWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (!warnings.length || res.headersSent) return;
  const had = res.getHeader('Warning');
  const before = had === undefined ? [] : Array.isArray(had) ? had : [String(had)];
  res.setHeader('Warning', [...before, ...warnings]);
}

/**
 * Drops the undeclared fields of a create/update body (`object`) or of a patched object
 * (`patch`), in place, then applies the mode: Strict → 400 naming every one; Warn → returns one
 * `Warning` value per field (for {@link addWarnings}); Ignore → nothing more.
 */
export function enforceFieldValidation(mode: FieldValidation, kind: BodyKind, body: unknown, form: 'object' | 'patch'): string[] {
  const unknown = unknownFieldsOfKind(kind.group, kind.version, kind.kind, body, { prune: true });
  if (!unknown.length || mode === 'Ignore') return [];
  if (mode === 'Strict') {
    const strict = `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`;
    throw badRequest(form === 'object' ? `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${strict}` : strict);
  }
  return unknown.map((f) => `299 - "unknown field \\"${f}\\""`);
}

/** Server-side apply refuses undeclared fields whatever the mode, as structured-merge-diff does (with `more` errors of the body the caller found). */
export function enforceApplySchema(kind: BodyKind, body: unknown, object: { namespace?: string; name: string }, more: readonly string[] = []): void {
  const errors = [...applyFieldErrorsOfKind(kind.group, kind.version, kind.kind, body), ...more];
  if (!errors.length) return;
  const gv = kind.group ? `${kind.group}/${kind.version}` : `/${kind.version}`;
  const detail = errors.length === 1 ? errors[0]! : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  throw badRequest(`failed to create typed patch object (${object.namespace ?? ''}/${object.name}; ${gv}, Kind=${kind.kind}): ${detail}`);
}

const BASE64_ALPHABET = /[A-Za-z0-9+/]/;

/**
 * Where Go's `base64.StdEncoding` (which decodes JSON `[]byte` fields) fails on `s`, or -1 when
 * it decodes: the offset of the first character outside the alphabet or misplaced padding, or
 * the start of an incomplete last quantum, as its `CorruptInputError` reports. CR and LF are skipped, as Go skips them.
 */
export function base64ErrorOffset(s: string): number {
  let inQuantum = 0;
  let quantumStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\r' || c === '\n') continue;
    if (inQuantum === 0) quantumStart = i;
    if (c === '=') {
      if (inQuantum < 2) return i;
      // "xx==" or "xxx=": the rest of the input must be the padding and nothing else.
      const rest = s.slice(i).replace(/[\r\n]/g, '');
      if (inQuantum === 2 && rest !== '==') return rest.startsWith('==') ? i + 2 : i + 1;
      if (inQuantum === 3 && rest !== '=') return i + 1;
      return -1;
    }
    if (!BASE64_ALPHABET.test(c)) return i;
    inQuantum = (inQuantum + 1) % 4;
  }
  return inQuantum === 0 ? -1 : quantumStart;
}

/** The `map[string][]byte` fields of a kind: its values are base64 on the wire. */
const BYTE_MAPS: Readonly<Record<string, readonly string[]>> = { Secret: ['data'], ConfigMap: ['binaryData'] };

/**
 * Refuses a Secret's `data` or a ConfigMap's `binaryData` value that is not base64, as decoding
 * the body does upstream: 400 `Secret in version "v1" cannot be handled as a Secret: illegal
 * base64 data at input byte 3` for a create/update body, 422 on the `patch` for a patched object.
 */
export function enforceByteFields(kind: BodyKind, obj: unknown, form: 'object' | 'patch'): void {
  const fields = BYTE_MAPS[kind.kind];
  if (!fields || kind.group !== '' || typeof obj !== 'object' || obj === null) return;
  for (const f of fields) {
    const map = (obj as Record<string, unknown>)[f];
    if (typeof map !== 'object' || map === null) continue;
    for (const v of Object.values(map)) {
      const at = typeof v === 'string' ? base64ErrorOffset(v) : v === null ? -1 : 0;
      if (at < 0) continue;
      const why = typeof v === 'string' ? `illegal base64 data at input byte ${at}` : `json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go struct field ${kind.kind}.${f} of type []uint8`;
      if (form === 'object') throw badRequest(`${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${why}`);
      throw invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${why}` }]);
    }
  }
}
