/**
 * Structural schemas of CustomResourceDefinition versions (apiextensions.k8s.io/v1
 * `openAPIV3Schema`): validation with upstream's field paths and messages, pruning of fields the
 * schema does not declare, and defaulting. The subset served is documented in docs/apiserver.md
 * "Custom resources"; `x-kubernetes-validations` (CEL) is refused when the CRD is written
 * (crd-validation.ts), so it never reaches here.
 */
import { duplicate, invalidValue, notSupported, required, tooLong, type FieldError } from '@nodelet/api';
import { isPlainObject, type Json } from '../object.js';
import { matchesFormat } from './formats.js';

/** One node of a structural schema (JSONSchemaProps as a CRD carries it). */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, StructuralSchema>;
  required?: string[];
  items?: StructuralSchema;
  additionalProperties?: boolean | StructuralSchema;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  multipleOf?: number;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'granular' | 'atomic';
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

const child = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** The JSON type name of a value as upstream's validator reports it. */
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(type: StructuralSchema['type'], v: unknown): boolean {
  switch (type) {
    case undefined:
      return true;
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return typeof v === type;
  }
}

const patternCache = new Map<string, RegExp>();
/** ECMA-262 is what OpenAPI names for `pattern`; upstream uses Go's RE2, which agrees on the common subset. */
export function compilePattern(p: string): RegExp {
  let re = patternCache.get(p);
  if (!re) patternCache.set(p, (re = new RegExp(p, 'u')));
  return re;
}

/**
 * Field errors of `value` against `schema`; `path` is the field path of `value` (`spec.replicas`,
 * `spec.items[0]`). Metadata of the root and of embedded resources is validated elsewhere.
 */
export function validateValue(schema: StructuralSchema, value: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (value === null) {
    if (schema.nullable || schema['x-kubernetes-preserve-unknown-fields'] && !schema.type) return errs;
    if (schema.type || schema['x-kubernetes-int-or-string']) {
      const want = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
      errs.push(invalidValue(path, 'null', `${path} in body must be of type ${want}: "null"`));
    }
    return errs;
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) {
      errs.push(invalidValue(path, typeName(value), `${path} in body must be of type integer,string: "${typeName(value)}"`));
      return errs;
    }
  } else if (!typeMatches(schema.type, value)) {
    errs.push(invalidValue(path, typeName(value), `${path} in body must be of type ${schema.type}: "${typeName(value)}"`));
    return errs;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errs.push(notSupported(path, value, schema.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (schema.maxLength !== undefined && len > schema.maxLength) errs.push(tooLong(path, schema.maxLength));
    if (schema.minLength !== undefined && len < schema.minLength) errs.push(invalidValue(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    if (schema.pattern !== undefined && !compilePattern(schema.pattern).test(value)) errs.push(invalidValue(path, value, `${path} in body should match '${schema.pattern}'`));
    if (schema.format !== undefined && !matchesFormat(schema.format, value)) errs.push(invalidValue(path, value, `${path} in body must be of type ${schema.format}: ${JSON.stringify(value)}`));
  }
  if (typeof value === 'number' && schema.multipleOf !== undefined && schema.multipleOf > 0) {
    const q = value / schema.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) errs.push(invalidValue(path, value, `${path} in body should be a multiple of ${schema.multipleOf}`));
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
      errs.push(invalidValue(path, value, `${path} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`));
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
      errs.push(invalidValue(path, value, `${path} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`));
    }
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) errs.push({ type: 'FieldValueTooMany', field: path, message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
    if (schema.minItems !== undefined && value.length < schema.minItems) errs.push(invalidValue(path, value.length, `${path} in body should have at least ${schema.minItems} items`));
    if (schema.items) value.forEach((v, i) => errs.push(...validateValue(schema.items!, v, `${path}[${i}]`)));
    errs.push(...listTypeErrors(schema, value, path));
  }
  if (isPlainObject(value)) errs.push(...validateObject(schema, value, path));
  return errs;
}

/** `x-kubernetes-list-type: set` items and `map` keys must be unique (upstream's Duplicate value). */
function listTypeErrors(schema: StructuralSchema, value: unknown[], path: string): FieldError[] {
  const type = schema['x-kubernetes-list-type'];
  if (type !== 'set' && type !== 'map') return [];
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen = new Set<string>();
  const errs: FieldError[] = [];
  value.forEach((v, i) => {
    const id = type === 'set' ? v : Object.fromEntries(keys.map((k) => [k, isPlainObject(v) ? v[k] : undefined]));
    const key = JSON.stringify(id);
    if (seen.has(key)) errs.push(duplicate(`${path}[${i}]`, id));
    seen.add(key);
  });
  return errs;
}

function validateObject(schema: StructuralSchema, value: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const n = Object.keys(value).length;
  if (schema.maxProperties !== undefined && n > schema.maxProperties) errs.push({ type: 'FieldValueTooMany', field: path, message: `Too many: ${n}: must have at most ${schema.maxProperties} items` });
  if (schema.minProperties !== undefined && n < schema.minProperties) errs.push(invalidValue(path, n, `${path} in body should have at least ${schema.minProperties} properties`));
  for (const r of schema.required ?? []) if (value[r] === undefined) errs.push(required(child(path, r)));
  const embedded = schema['x-kubernetes-embedded-resource'];
  if (embedded) {
    if (typeof value.apiVersion !== 'string' || !value.apiVersion) errs.push(required(child(path, 'apiVersion'), 'Required value: must not be empty'));
    if (typeof value.kind !== 'string' || !value.kind) errs.push(required(child(path, 'kind'), 'Required value: must not be empty'));
  }
  for (const [k, v] of Object.entries(value)) {
    if (embedded && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const prop = schema.properties?.[k];
    if (prop) errs.push(...validateValue(prop, v, child(path, k)));
    else if (isPlainObject(schema.additionalProperties)) errs.push(...validateValue(schema.additionalProperties, v, child(path, k)));
  }
  return errs;
}

/**
 * Removes, in place, fields `schema` does not declare (upstream's pruning); returns `value`.
 * `pruned` collects the removed fields' paths (`spec.bogus`), for field validation.
 */
export function prune(schema: StructuralSchema | undefined, value: unknown, isRoot = false, pruned?: string[], path = ''): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => prune(schema.items, v, false, pruned, `${path}[${i}]`));
    return value;
  }
  if (!isPlainObject(value)) return value;
  const keepMeta = isRoot || schema['x-kubernetes-embedded-resource'];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'];
  for (const k of Object.keys(value)) {
    if (keepMeta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const prop = schema.properties?.[k];
    if (prop) prune(prop, value[k], false, pruned, child(path, k));
    else if (isPlainObject(schema.additionalProperties)) prune(schema.additionalProperties, value[k], false, pruned, child(path, k));
    else if (!preserve && schema.additionalProperties !== true) {
      delete value[k];
      pruned?.push(child(path, k));
    }
  }
  return value;
}

/** Fills, in place, absent fields that have a `default` in `schema`, at every depth; returns `value`. */
export function applyDefaults(schema: StructuralSchema | undefined, value: unknown): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v) => applyDefaults(schema.items, v));
    return value;
  }
  if (!isPlainObject(value)) return value;
  for (const [k, prop] of Object.entries(schema.properties ?? {})) {
    if (value[k] === undefined && prop.default !== undefined) value[k] = structuredClone(prop.default);
    if (value[k] !== undefined) applyDefaults(prop, value[k]);
  }
  if (isPlainObject(schema.additionalProperties)) {
    for (const k of Object.keys(value)) if (!schema.properties?.[k]) applyDefaults(schema.additionalProperties, value[k]);
  }
  return value;
}
