/**
 * The CustomResourceDefinition kind itself: defaults and validation of a CRD as written
 * (upstream's apiextensions validation, the parts nodelet serves), and its status split.
 * `x-kubernetes-validations` (CEL) and webhook conversion are refused here, loudly, rather than
 * accepted and ignored.
 */
import { dns1123LabelProblem, forbiddenField, invalidValue, notSupported, required, type FieldError } from '@nodelet/api';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import type { Strategy, TablePrinter } from '../resource.js';
import { NAME_COLUMN } from '../table/format.js';
import { compilePattern, type StructuralSchema } from './schema.js';
import { CLEANUP_FINALIZER, type CrdSpec } from './types.js';

const SCHEMA_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
/** Keywords a structural schema may use here; anything else is refused by name. */
const SCHEMA_KEYS = new Set([
  'type', 'description', 'format', 'title', 'properties', 'required', 'items', 'additionalProperties', 'enum', 'pattern',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'nullable',
  'default', 'example', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'uniqueItems', 'multipleOf', 'minProperties', 'maxProperties',
]);

function validateSchema(s: unknown, path: string, errs: FieldError[]): void {
  if (!isPlainObject(s)) {
    errs.push(invalidValue(path, s, 'must be an object'));
    return;
  }
  for (const k of Object.keys(s)) {
    if (k === 'x-kubernetes-validations') errs.push(forbiddenField(`${path}.x-kubernetes-validations`, 'CEL validation rules (x-kubernetes-validations) are not supported by this server (nodelet); see docs/apiserver.md "Custom resources"'));
    else if (!SCHEMA_KEYS.has(k)) errs.push(forbiddenField(`${path}.${k}`, `${k} is not supported in the schemas of this server (nodelet)`));
  }
  if (s.uniqueItems === true) errs.push(forbiddenField(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'map' && !(Array.isArray(s['x-kubernetes-list-map-keys']) && s['x-kubernetes-list-map-keys'].length)) {
    errs.push(required(`${path}.x-kubernetes-list-map-keys`, 'Required value: must not be empty if x-kubernetes-list-type is map'));
  }
  const type = s.type;
  if (type !== undefined && !SCHEMA_TYPES.includes(type as string)) errs.push(notSupported(`${path}.type`, type, SCHEMA_TYPES));
  if (type === undefined && !s['x-kubernetes-preserve-unknown-fields'] && !s['x-kubernetes-int-or-string'] && !s['x-kubernetes-embedded-resource']) {
    errs.push(required(`${path}.type`, 'Required value: must not be empty for specified object fields'));
  }
  if (typeof s.pattern === 'string') {
    // Upstream compiles patterns with Go's RE2: no lookaround, no backreferences. Refusing them
    // here keeps to what upstream accepts and out of JavaScript's backtracking-only features.
    const re2Problem = /\(\?<?[=!]|\\[1-9]|\\k</.test(s.pattern) ? 'lookaround and backreferences are not supported' : undefined;
    let problem = re2Problem;
    if (!problem) {
      try {
        compilePattern(s.pattern);
      } catch (err) {
        problem = (err as Error).message;
      }
    }
    if (problem) errs.push(invalidValue(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${problem}`));
  }
  if (isPlainObject(s.properties)) for (const [k, v] of Object.entries(s.properties)) validateSchema(v, `${path}.properties[${k}]`, errs);
  if (s.items !== undefined) validateSchema(s.items, `${path}.items`, errs);
  if (isPlainObject(s.additionalProperties)) validateSchema(s.additionalProperties, `${path}.additionalProperties`, errs);
}

/** Groups kube reserves for its own APIs: a CRD there needs an approval annotation (KEP 1111). */
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';
function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/** Field errors of a CRD (`old` on update: the group, names.plural and scope may not change there). */
export function validateCrd(obj: ApiObject, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj.spec as Partial<CrdSpec> | undefined;
  if (!isPlainObject(spec)) return [required('spec')];
  const group = spec.group;
  if (!group) errs.push(required('spec.group'));
  else if (!group.includes('.')) errs.push(invalidValue('spec.group', group, 'should be a domain with at least one dot'));
  const names = (spec.names ?? {}) as Partial<CrdSpec['names']>;
  if (!names.plural) errs.push(required('spec.names.plural'));
  else if (dns1123LabelProblem(names.plural) || names.plural !== names.plural.toLowerCase()) errs.push(invalidValue('spec.names.plural', names.plural, 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\''));
  if (!names.kind) errs.push(required('spec.names.kind'));
  if (names.plural && group && obj.metadata.name !== `${names.plural}.${group}`) {
    errs.push(invalidValue('metadata.name', obj.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  if (spec.preserveUnknownFields === true) errs.push(invalidValue('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  if (names.kind && !/^[A-Z][A-Za-z0-9]*$/.test(names.kind)) errs.push(invalidValue('spec.names.kind', names.kind, 'must be an UpperCamelCase name (letters and digits, starting with a capital)'));
  const strategy = spec.conversion?.strategy ?? 'None';
  if (strategy !== 'None') errs.push(notSupported('spec.conversion.strategy', strategy, ['None']));
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (!versions.length) errs.push(required('spec.versions', 'Required value: must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v?.storage).length !== 1) errs.push(invalidValue('spec.versions', versions.map((v) => v?.name), 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v?.name) errs.push(required(`${p}.name`));
    else if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v.name)) errs.push(invalidValue(`${p}.name`, v.name, 'a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character'));
    else if (seen.has(v.name)) errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, message: `Duplicate value: ${JSON.stringify(v.name)}` });
    else seen.add(v.name);
    const schema = v?.schema?.openAPIV3Schema as StructuralSchema | undefined;
    if (!schema) errs.push(required(`${p}.schema.openAPIV3Schema`, 'Required value: schemas are required'));
    else {
      validateSchema(schema, `${p}.schema.openAPIV3Schema`, errs);
      if (schema.type !== 'object') errs.push(invalidValue(`${p}.schema.openAPIV3Schema.type`, schema.type ?? '', 'must be object at the root'));
    }
    (v?.additionalPrinterColumns ?? []).forEach((c, j) => {
      const cp = `${p}.additionalPrinterColumns[${j}]`;
      if (!c?.name) errs.push(required(`${cp}.name`));
      if (!COLUMN_TYPES.includes(c?.type)) errs.push(notSupported(`${cp}.type`, c?.type, COLUMN_TYPES));
      if (!c?.jsonPath) errs.push(required(`${cp}.jsonPath`));
      else if (!c.jsonPath.startsWith('.')) errs.push(invalidValue(`${cp}.jsonPath`, c.jsonPath, 'must be a simple json path starting with .'));
      if (c?.priority !== undefined && !(Number.isInteger(c.priority) && c.priority >= 0)) errs.push(invalidValue(`${cp}.priority`, c.priority, 'must be a non-negative integer'));
    });
    (v?.selectableFields ?? []).forEach((f, j) => {
      if (!f?.jsonPath?.startsWith('.')) errs.push(invalidValue(`${p}.selectableFields[${j}].jsonPath`, f?.jsonPath, 'must be a simple json path starting with .'));
    });
    const scale = v?.subresources?.scale;
    if (scale && (!scale.specReplicasPath?.startsWith('.spec.') || !scale.statusReplicasPath?.startsWith('.status.'))) {
      errs.push(invalidValue(`${p}.subresources.scale`, scale, 'specReplicasPath must start with .spec. and statusReplicasPath with .status.'));
    }
  });
  if (group && isProtectedGroup(group) && !obj.metadata.annotations?.[APPROVAL_ANNOTATION]) {
    errs.push(required(`metadata.annotations[${APPROVAL_ANNOTATION}]`, `Required value: protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`));
  }
  if (old) {
    const o = old.spec as CrdSpec;
    if (o.group !== spec.group) errs.push(invalidValue('spec.group', spec.group, 'field is immutable'));
    if (o.names.plural !== names.plural) errs.push(invalidValue('spec.names.plural', names.plural, 'field is immutable'));
    if (o.scope !== spec.scope) errs.push(invalidValue('spec.scope', spec.scope, 'field is immutable'));
  }
  return errs;
}

/** Defaults upstream applies to a CRD (names.singular/listKind, conversion None, served flags stay as given). */
function defaultCrd(obj: ApiObject): void {
  const spec = obj.spec as Json | undefined;
  if (!isPlainObject(spec)) return;
  const names = spec.names as Json | undefined;
  if (isPlainObject(names) && typeof names.kind === 'string') {
    names.singular ??= names.kind.toLowerCase();
    names.listKind ??= `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
}

export const crdStrategy: Strategy = {
  prepareForCreate(obj) {
    delete obj.status;
    // Deleting the CRD first deletes its objects (controller.ts removes the finalizer after).
    const f = obj.metadata.finalizers ?? [];
    if (!f.includes(CLEANUP_FINALIZER)) obj.metadata.finalizers = [...f, CLEANUP_FINALIZER];
  },
  defaults: defaultCrd,
  validate: (obj, old) => validateCrd(obj, old),
};

/** `kubectl get crd`: Name and Created At (the timestamp itself, not an age). */
export const CRD_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, { name: 'Created At', type: 'date', description: 'The time the CRD was created.', priority: 0 }],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
};
