/**
 * `fieldValidation=Strict|Warn|Ignore` for the fields the server knows without OpenAPI schemas:
 * an object's top-level fields and ObjectMeta's. kubectl sends Strict by default, so a typo such
 * as `sepc:` is rejected with upstream's message (`strict decoding error: unknown field "sepc"`).
 * Deeper fields are not checked (no schemas yet; documented in docs/apiserver.md).
 */
import type { ServerResponse } from 'node:http';
import { isPlainObject } from './object.js';
import { badRequest } from './status.js';

const TOP_LEVEL_BY_KIND: Readonly<Record<string, readonly string[]>> = {
  ConfigMap: ['data', 'binaryData', 'immutable'],
  Secret: ['data', 'stringData', 'type', 'immutable'],
  Endpoints: ['subsets'],
  ServiceAccount: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  Lease: ['spec'],
  EndpointSlice: ['addressType', 'endpoints', 'ports'],
  RuntimeClass: ['handler', 'overhead', 'scheduling'],
  Event: [
    'involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime',
    'series', 'action', 'related', 'reportingComponent', 'reportingInstance',
  ],
  Scale: ['spec', 'status'],
  Role: ['rules'],
  ClusterRole: ['rules', 'aggregationRule'],
  RoleBinding: ['subjects', 'roleRef'],
  ClusterRoleBinding: ['subjects', 'roleRef'],
};

const META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function fieldValidationOf(url: URL): FieldValidation {
  const v = url.searchParams.get('fieldValidation') ?? 'Warn';
  if (v !== 'Strict' && v !== 'Warn' && v !== 'Ignore') throw badRequest(`fieldValidation must be one of Ignore, Warn, Strict; got "${v}"`);
  return v;
}

/** Unknown top-level and metadata fields of `body` (`$` directives of patches are skipped). */
export function unknownFields(kind: string, statusSplit: boolean, body: unknown): string[] {
  if (!isPlainObject(body)) return [];
  const allowed = new Set(['apiVersion', 'kind', 'metadata', ...(TOP_LEVEL_BY_KIND[kind] ?? (statusSplit ? ['spec', 'status'] : []))]);
  const out: string[] = [];
  for (const k of Object.keys(body)) if (!k.startsWith('$') && !allowed.has(k)) out.push(k);
  if (isPlainObject(body.metadata)) for (const k of Object.keys(body.metadata)) if (!k.startsWith('$') && !META_FIELDS.has(k)) out.push(`metadata.${k}`);
  return out;
}

/** Strict → 400; Warn → a `Warning` header kubectl prints; Ignore → nothing. */
export function enforceFieldValidation(mode: FieldValidation, kind: string, statusSplit: boolean, body: unknown, res: ServerResponse): void {
  if (mode === 'Ignore') return;
  const unknown = unknownFields(kind, statusSplit, body);
  if (!unknown.length) return;
  if (mode === 'Strict') throw badRequest(`strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`);
  res.setHeader('Warning', unknown.map((f) => `299 - "unknown field \\"${f}\\""`));
}
