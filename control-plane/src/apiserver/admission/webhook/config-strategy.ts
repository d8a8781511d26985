/**
 * Strategy of admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration (upstream pkg/apis/admissionregistration: v1 defaults and
 * validation): defaults filled on every write, then every webhook checked, so a stored
 * configuration is always one the dispatcher can call.
 */
import { dns1123LabelProblem, dns1123SubdomainProblem, duplicate, forbiddenField, invalidValue, labelSelectorErrors, notSupported, required, type FieldError } from '@nodelet/api';
import { isPlainObject, type ApiObject, type Json } from '../../object.js';
import type { Strategy } from '../../resource.js';

/** The AdmissionReview version this server sends (upstream also speaks v1beta1). */
export const REVIEW_VERSION = 'v1';
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const SIDE_EFFECTS_V1 = ['None', 'NoneOnDryRun'];

/** v1 defaults (SetDefaults_ValidatingWebhook / _MutatingWebhook / _Rule / _ServiceReference), in place. */
function defaultWebhook(h: Json, mutating: boolean): void {
  h.failurePolicy ??= 'Fail';
  h.matchPolicy ??= 'Equivalent';
  h.namespaceSelector ??= {};
  h.objectSelector ??= {};
  h.timeoutSeconds ??= 10;
  if (mutating) h.reinvocationPolicy ??= 'Never';
  for (const r of Array.isArray(h.rules) ? h.rules : []) if (isPlainObject(r)) r.scope ??= '*';
  const cc = h.clientConfig;
  if (isPlainObject(cc) && isPlainObject(cc.service)) cc.service.port ??= 443;
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [];
}

// Upstream validateResources: the wildcards `*` and `*/*` stand alone; subresources follow their resource.
function resourceErrors(resources: string[], path: string): FieldError[] {
  if (!resources.length) return [required(path)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const hasWildAll = resources.includes('*/*');
  for (const [i, r] of resources.entries()) {
    const p = `${path}[${i}]`;
    if (r === '') {
      errs.push(required(p));
      continue;
    }
    if (seen.has(r)) errs.push(duplicate(p, r));
    seen.add(r);
    const [res, sub] = r.split('/', 2) as [string, string | undefined];
    if (r.split('/').length > 2 || res === '' || sub === '') errs.push(invalidValue(p, r, "must be a resource, resource/subresource, or a wildcard ('*', '*/*', '*/subresource', 'resource/*')"));
    if (hasWildAll && r !== '*/*') errs.push(invalidValue(p, r, "if '*/*' is present, must not specify other resources"));
    if (r === '*' && resources.some((o) => o !== '*' && !o.includes('/'))) errs.push(invalidValue(p, r, "if '*' is present, must not specify other resources without subresources"));
  }
  return errs;
}

function ruleErrors(rule: unknown, path: string): FieldError[] {
  if (!isPlainObject(rule)) return [invalidValue(path, rule, 'must be an object')];
  const errs: FieldError[] = [];
  const ops = stringList(rule.operations);
  if (!ops.length) errs.push(required(`${path}.operations`));
  for (const [i, op] of ops.entries()) if (!OPERATIONS.includes(op)) errs.push(notSupported(`${path}.operations[${i}]`, op, OPERATIONS.slice(1)));
  if (ops.includes('*') && ops.length > 1) errs.push(invalidValue(`${path}.operations`, ops, "if '*' is present, must not specify other operations"));
  for (const f of ['apiGroups', 'apiVersions'] as const) {
    const vs = stringList(rule[f]);
    if (!vs.length) errs.push(required(`${path}.${f}`));
    if (vs.includes('*') && vs.length > 1) errs.push(invalidValue(`${path}.${f}`, vs, `if '*' is present, must not specify other ${f === 'apiGroups' ? 'API groups' : 'API versions'}`));
    if (f === 'apiVersions') for (const [i, v] of vs.entries()) if (v === '') errs.push(required(`${path}.apiVersions[${i}]`, 'Required value: version must not be empty'));
  }
  errs.push(...resourceErrors(stringList(rule.resources), `${path}.resources`));
  if (rule.scope !== undefined && !SCOPES.includes(String(rule.scope))) errs.push(notSupported(`${path}.scope`, rule.scope, SCOPES));
  return errs;
}

/** upstream ValidateWebhookURL (https only, a host, no user, query or fragment) and service references. */
function clientConfigErrors(cc: unknown, path: string): FieldError[] {
  if (!isPlainObject(cc)) return [required(path)];
  const hasUrl = cc.url !== undefined && cc.url !== null;
  const hasService = cc.service !== undefined && cc.service !== null;
  if (hasUrl === hasService) return [required(path, 'Required value: exactly one of url or service is required')];
  const errs: FieldError[] = [];
  if (hasUrl) {
    const p = `${path}.url`;
    let u: URL | undefined;
    try {
      u = new URL(String(cc.url));
    } catch {
      errs.push(invalidValue(p, cc.url, 'host must be specified'));
    }
    if (u) {
      if (u.protocol !== 'https:') errs.push(invalidValue(p, cc.url, "'https' is the only allowed URL scheme"));
      if (!u.hostname) errs.push(invalidValue(p, cc.url, 'host must be specified'));
      if (u.username || u.password) errs.push(invalidValue(p, cc.url, 'user information is not permitted in the URL'));
      if (u.hash || String(cc.url).includes('#')) errs.push(invalidValue(p, cc.url, 'fragments are not permitted in the URL'));
      if (u.search || String(cc.url).includes('?')) errs.push(invalidValue(p, cc.url, 'query parameters are not permitted in the URL'));
    }
  } else if (isPlainObject(cc.service)) {
    const s = cc.service;
    const p = `${path}.service`;
    if (!s.name) errs.push(required(`${p}.name`, 'Required value: service name is required'));
    if (!s.namespace) errs.push(required(`${p}.namespace`, 'Required value: service namespace is required'));
    if (s.path !== undefined && s.path !== '' && !String(s.path).startsWith('/')) errs.push(invalidValue(`${p}.path`, s.path, "must start with a '/'"));
    const port = s.port;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) errs.push(invalidValue(`${p}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  } else errs.push(invalidValue(`${path}.service`, cc.service, 'must be an object'));
  if (cc.caBundle !== undefined && typeof cc.caBundle !== 'string') errs.push(invalidValue(`${path}.caBundle`, cc.caBundle, 'must be base64 data'));
  return errs;
}

function enumError(h: Json, field: string, path: string, allowed: readonly string[]): FieldError[] {
  return allowed.includes(String(h[field])) ? [] : [notSupported(`${path}.${field}`, h[field], allowed)];
}

function webhookErrors(h: unknown, path: string, mutating: boolean): FieldError[] {
  if (!isPlainObject(h)) return [invalidValue(path, h, 'must be an object')];
  const errs: FieldError[] = [];
  const name = typeof h.name === 'string' ? h.name : '';
  if (!name) errs.push(required(`${path}.name`));
  else {
    const problem = dns1123SubdomainProblem(name);
    if (problem) errs.push(invalidValue(`${path}.name`, name, problem));
    else if (name.split('.').length < 3) errs.push(invalidValue(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'));
  }
  const versions = stringList(h.admissionReviewVersions);
  if (!versions.length) errs.push(required(`${path}.admissionReviewVersions`, `Required value: must specify one of ${REVIEW_VERSION}`));
  else if (!versions.includes(REVIEW_VERSION)) errs.push(invalidValue(`${path}.admissionReviewVersions`, versions, `must include at least one of ${REVIEW_VERSION}`));
  const seen = new Set<string>();
  for (const [i, v] of versions.entries()) {
    const problem = dns1123LabelProblem(v);
    if (problem) errs.push(invalidValue(`${path}.admissionReviewVersions[${i}]`, v, problem));
    if (seen.has(v)) errs.push(duplicate(`${path}.admissionReviewVersions[${i}]`, v));
    seen.add(v);
  }
  for (const [i, r] of (Array.isArray(h.rules) ? h.rules : []).entries()) errs.push(...ruleErrors(r, `${path}.rules[${i}]`));
  if (h.sideEffects === undefined || h.sideEffects === null) errs.push(required(`${path}.sideEffects`, `Required value: must specify one of ${SIDE_EFFECTS_V1.join(', ')}`));
  else errs.push(...enumError(h, 'sideEffects', path, SIDE_EFFECTS_V1));
  errs.push(...enumError(h, 'failurePolicy', path, ['Fail', 'Ignore']), ...enumError(h, 'matchPolicy', path, ['Equivalent', 'Exact']));
  if (mutating) errs.push(...enumError(h, 'reinvocationPolicy', path, ['IfNeeded', 'Never']));
  const t = h.timeoutSeconds;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 30) errs.push(invalidValue(`${path}.timeoutSeconds`, t, 'the timeout value must be between 1 and 30 seconds'));
  errs.push(...labelSelectorErrors(h.namespaceSelector, `${path}.namespaceSelector`), ...labelSelectorErrors(h.objectSelector, `${path}.objectSelector`));
  errs.push(...clientConfigErrors(h.clientConfig, `${path}.clientConfig`));
  // CEL is not evaluated here: a condition that narrowed the webhook must not be dropped silently.
  if (Array.isArray(h.matchConditions) && h.matchConditions.length) errs.push(forbiddenField(`${path}.matchConditions`, 'CEL match conditions are not supported by this server'));
  return errs;
}

function configurationStrategy(mutating: boolean): Strategy {
  return {
    defaults(obj: ApiObject) {
      for (const h of Array.isArray(obj.webhooks) ? obj.webhooks : []) if (isPlainObject(h)) defaultWebhook(h, mutating);
    },
    validate(obj: ApiObject) {
      if (obj.webhooks === undefined || obj.webhooks === null) return [];
      if (!Array.isArray(obj.webhooks)) return [invalidValue('webhooks', obj.webhooks, 'must be a list')];
      const errs: FieldError[] = [];
      const names = new Set<string>();
      for (const [i, h] of obj.webhooks.entries()) {
        errs.push(...webhookErrors(h, `webhooks[${i}]`, mutating));
        const name = isPlainObject(h) ? h.name : undefined;
        if (typeof name === 'string' && name) {
          if (names.has(name)) errs.push(duplicate(`webhooks[${i}].name`, name));
          names.add(name);
        }
      }
      return errs;
    },
  };
}

export const mutatingWebhookConfigurationStrategy = configurationStrategy(true);
export const validatingWebhookConfigurationStrategy = configurationStrategy(false);
