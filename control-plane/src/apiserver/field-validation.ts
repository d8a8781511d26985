/**
 * `fieldValidation=Strict|Warn|Ignore`: fields of a body that its kind's schema does not declare,
 * found with the schemas `/openapi/v3` publishes (`@nodelet/api` schema modules), at every depth.
 * kubectl sends Strict by default, so `sepc:` or `spec.template.spec.containers[0].imagePullPolice`
 * is refused with kube-apiserver's message; Warn answers with `Warning` headers kubectl prints.
 *
 *   create / update   400 `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`
 *   merge / strategic 400 `strict decoding error: unknown field "spec.foo"`
 *   apply (any mode)  400 `failed to create typed patch object (ns/name; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema`
 */
import type { ServerResponse } from 'node:http';
import { applyFieldErrorsOfKind, unknownFieldsOfKind } from '@nodelet/api';
import { badRequest } from './status.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The kind a body is checked as. */
export interface BodyKind {
  group: string;
  version: string;
  kind: string;
}

export function fieldValidationOf(url: URL): FieldValidation {
  const v = url.searchParams.get('fieldValidation') ?? 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') throw badRequest(`fieldValidation must be one of Ignore, Warn, Strict; got "${v}"`);
  return v;
}

/**
 * Applies the validation mode to a create/update body (`object`) or a merge/strategic patch
 * (`patch`): Strict → 400 naming every unknown field; Warn → one `Warning` header per field;
 * Ignore → nothing.
 */
export function enforceFieldValidation(mode: FieldValidation, kind: BodyKind, body: unknown, res: ServerResponse, form: 'object' | 'patch'): void {
  if (mode === 'Ignore') return;
  const unknown = unknownFieldsOfKind(kind.group, kind.version, kind.kind, body, { patch: form === 'patch' });
  if (!unknown.length) return;
  if (mode === 'Strict') {
    const strict = `strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`;
    throw badRequest(form === 'object' ? `${kind.kind} in version "${kind.version}" cannot be handled as a ${kind.kind}: ${strict}` : strict);
  }
  res.setHeader('Warning', unknown.map((f) => `299 - "unknown field \\"${f}\\""`));
}

/** Server-side apply refuses undeclared fields whatever the mode, as structured-merge-diff does. */
export function enforceApplySchema(kind: BodyKind, body: unknown, object: { namespace?: string; name: string }): void {
  const errors = applyFieldErrorsOfKind(kind.group, kind.version, kind.kind, body);
  if (!errors.length) return;
  const gv = kind.group ? `${kind.group}/${kind.version}` : `/${kind.version}`;
  const detail = errors.length === 1 ? errors[0]! : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  throw badRequest(`failed to create typed patch object (${object.namespace ?? ''}/${object.name}; ${gv}, Kind=${kind.kind}): ${detail}`);
}
