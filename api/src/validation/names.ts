/**
 * Name and label syntax checks of k8s.io/apimachinery/pkg/util/validation (DNS-1123 label and
 * subdomain, qualified names for label keys, label values) and ObjectMeta validation.
 */
import { invalidValue, required, tooLong, type FieldError } from './field-error.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** Problems with `s` as a DNS-1123 subdomain, worded like the real apiserver. */
export function dns1123SubdomainProblem(s: string): string | undefined {
  if (isDns1123Subdomain(s)) return undefined;
  if (s.length > 253) return 'must be no more than 253 characters';
  return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
}

export function dns1123LabelProblem(s: string): string | undefined {
  if (isDns1123Label(s)) return undefined;
  if (s.length > 63) return 'must be no more than 63 characters';
  return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
}

/** Label/annotation key: optional DNS subdomain prefix + '/' + qualified name of ≤ 63 chars. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'";
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2 && !isDns1123Subdomain(parts[0]!)) return 'prefix part must be a lowercase RFC 1123 subdomain';
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME.test(name)) return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;

/**
 * Problems of a ConfigMap/Secret data key (validation.IsConfigMapKey). Keys become file names in
 * configMap/secret volumes, so `.`, `..` and `..`-prefixed names (the atomic writer's) are refused.
 */
export function configMapKeyProblems(key: string): string[] {
  const out: string[] = [];
  if (key.length > 253) out.push('must be no more than 253 characters');
  if (!CONFIG_MAP_KEY.test(key)) {
    out.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key_name', regex used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  return undefined;
}

export interface MetaForValidation {
  name?: unknown;
  generateName?: unknown;
  namespace?: unknown;
  labels?: unknown;
  annotations?: unknown;
  finalizers?: unknown;
}

/**
 * ObjectMeta checks on create/update: name (DNS-1123 subdomain, a label when `nameIsLabel`, a
 * path segment when `nameIsPathSegment`),
 * namespace presence by scope, label keys/values, annotation keys and total size.
 */
/** Path-segment names (RBAC objects, upstream path.IsValidPathSegmentName): anything but `.`, `..`, `/` and `%`. */
export function pathSegmentNameProblem(name: string): string | undefined {
  if (name === '.' || name === '..') return `may not be '${name}'`;
  if (name.includes('/')) return "may not contain '/'";
  if (name.includes('%')) return "may not contain '%'";
  return undefined;
}

export function validateObjectMeta(meta: MetaForValidation | undefined, opts: { namespaced: boolean; nameIsLabel?: boolean; nameIsPathSegment?: boolean }): FieldError[] {
  const errs: FieldError[] = [];
  if (!meta || typeof meta !== 'object') return [required('metadata')];
  const name = meta.name;
  if (typeof name !== 'string' || name === '') {
    errs.push(required('metadata.name', 'Required value: name or generateName is required'));
  } else {
    const problem = opts.nameIsPathSegment ? pathSegmentNameProblem(name) : opts.nameIsLabel ? dns1123LabelProblem(name) : dns1123SubdomainProblem(name);
    if (problem) errs.push(invalidValue('metadata.name', name, problem));
  }
  if (opts.namespaced) {
    if (typeof meta.namespace !== 'string' || meta.namespace === '') errs.push(required('metadata.namespace'));
    else if (!isDns1123Label(meta.namespace)) errs.push(invalidValue('metadata.namespace', meta.namespace, dns1123LabelProblem(meta.namespace)!));
  }
  errs.push(...validateStringMap(meta.labels, 'metadata.labels', true));
  errs.push(...validateStringMap(meta.annotations, 'metadata.annotations', false));
  if (meta.annotations && typeof meta.annotations === 'object') {
    const size = Object.entries(meta.annotations).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
    if (size > 256 * 1024) errs.push(tooLong('metadata.annotations', 256 * 1024));
  }
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) errs.push(invalidValue('metadata.finalizers', meta.finalizers, 'must be a list of strings'));
  return errs;
}

function validateStringMap(map: unknown, path: string, isLabels: boolean): FieldError[] {
  if (map === undefined || map === null) return [];
  if (typeof map !== 'object' || Array.isArray(map)) return [invalidValue(path, map, 'must be a map of strings')];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(map)) {
    const keyProblem = qualifiedNameProblem(k);
    if (keyProblem) errs.push(invalidValue(path, k, keyProblem));
    if (typeof v !== 'string') errs.push(invalidValue(`${path}.${k}`, v, 'must be a string'));
    else if (isLabels) {
      const valueProblem = labelValueProblem(v);
      if (valueProblem) errs.push(invalidValue(`${path}.${k}`, v, valueProblem));
    }
  }
  return errs;
}
