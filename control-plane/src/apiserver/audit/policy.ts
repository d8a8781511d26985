/**
 * The audit policy (`--audit-policy-file`, audit.k8s.io/v1 `Policy`): parsing, validation and
 * rule matching with kube-apiserver's semantics (docs/security.md "Audit logging").
 *
 *   request attributes ─▶ rules[0] matches? ─yes─▶ its level and omitStages (∪ the policy's)
 *                         └no─▶ rules[1] … ─▶ none matched: level None (nothing is logged)
 *
 * A rule matches when every list it sets contains the request's value: `users` (the
 * authenticated user, not an impersonated one), `userGroups` (any group), `verbs`, then for
 * resource requests `namespaces` ("" is a cluster-scoped object) and `resources`, for other
 * requests `nonResourceURLs`. A rule with `nonResourceURLs` never matches a resource request and
 * one with `resources` or `namespaces` never matches a non-resource request.
 */
import YAML from 'yaml';

export const AUDIT_LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof AUDIT_LEVELS)[number];
export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof AUDIT_STAGES)[number];

/** `GroupResources`: "" is the core group; `resources` may be `*`, `pods/log`, `*\/status` or `pods/*`. */
export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages: AuditStage[];
  omitManagedFields: boolean;
}

/** What the policy checker needs to know of a request (authorizer.Attributes upstream). */
export interface AuditAttributes {
  user: { name: string; groups: readonly string[] };
  verb: string;
  /** Set for resource requests; absent for non-resource ones (then `path` is used). */
  resource?: { group: string; resource: string; subresource?: string; namespace?: string; name?: string };
  path: string;
}

/** The decision for one request: its level, the stages not to log, and whether managedFields go. */
export interface AuditDecision {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

/** True when `level` logs at least as much as `min`. */
export function levelAtLeast(level: AuditLevel, min: AuditLevel): boolean {
  return AUDIT_LEVELS.indexOf(level) >= AUDIT_LEVELS.indexOf(min);
}

const KNOWN_POLICY_KEYS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const KNOWN_RULE_KEYS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);
const KNOWN_GR_KEYS = new Set(['group', 'resources', 'resourceNames']);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Parses and validates a policy document (YAML or JSON). Throws one Error listing every problem
 * with its field path (`rules[2].level: Unsupported value: "Everything"`), so that the server
 * refuses to start with a policy it would apply differently from kube-apiserver. Unknown fields
 * are errors too: a misspelt `namespace:` would otherwise widen a rule silently.
 */
export function parseAuditPolicy(text: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new Error(`not YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
  const errs: string[] = [];
  if (!isObject(doc)) throw new Error('the policy must be an object with kind: Policy');
  if (doc.apiVersion !== 'audit.k8s.io/v1') errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: "audit.k8s.io/v1"`);
  if (doc.kind !== 'Policy') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "Policy"`);
  unknownKeys(doc, KNOWN_POLICY_KEYS, '', errs);
  const omitStages = stages(doc.omitStages, 'omitStages', errs);
  const omitManagedFields = optionalBool(doc.omitManagedFields, 'omitManagedFields', errs) ?? false;
  const rules: PolicyRule[] = [];
  if (doc.rules !== undefined && !Array.isArray(doc.rules)) errs.push('rules: must be a list');
  const rawRules = Array.isArray(doc.rules) ? (doc.rules as unknown[]) : [];
  if (rawRules.length === 0) errs.push('rules: Required value: a policy without rules logs nothing');
  rawRules.forEach((r, i) => {
    const rule = parseRule(r, `rules[${i}]`, errs);
    if (rule) rules.push(rule);
  });
  if (errs.length > 0) throw new Error(errs.join('; '));
  return { rules, omitStages, omitManagedFields };
}

function parseRule(r: unknown, path: string, errs: string[]): PolicyRule | undefined {
  if (!isObject(r)) {
    errs.push(`${path}: must be an object`);
    return undefined;
  }
  unknownKeys(r, KNOWN_RULE_KEYS, `${path}.`, errs);
  let level: AuditLevel = 'None';
  if (r.level === undefined || r.level === '') errs.push(`${path}.level: Required value`);
  else if (!AUDIT_LEVELS.includes(r.level as AuditLevel)) errs.push(`${path}.level: Unsupported value: ${JSON.stringify(r.level)}: supported values: ${AUDIT_LEVELS.map((l) => `"${l}"`).join(', ')}`);
  else level = r.level as AuditLevel;
  const nonResourceURLs = strings(r.nonResourceURLs, `${path}.nonResourceURLs`, errs);
  nonResourceURLs.forEach((u, i) => {
    if (u === '*') return;
    if (!u.startsWith('/')) errs.push(`${path}.nonResourceURLs[${i}]: Invalid value: "${u}": non-resource URL rules must begin with a '/' character`);
    if (u.slice(0, -1).includes('*')) errs.push(`${path}.nonResourceURLs[${i}]: Invalid value: "${u}": non-resource URL wildcards '*' must be the final character of the rule`);
  });
  const resources: GroupResources[] = [];
  if (r.resources !== undefined && !Array.isArray(r.resources)) errs.push(`${path}.resources: must be a list`);
  (Array.isArray(r.resources) ? (r.resources as unknown[]) : []).forEach((g, i) => {
    const p = `${path}.resources[${i}]`;
    if (!isObject(g)) {
      errs.push(`${p}: must be an object`);
      return;
    }
    unknownKeys(g, KNOWN_GR_KEYS, `${p}.`, errs);
    const group = g.group === undefined ? '' : typeof g.group === 'string' ? g.group : (errs.push(`${p}.group: must be a string`), '');
    if (group !== '' && (!DNS_SUBDOMAIN.test(group) || group.length > 253)) errs.push(`${p}.group: Invalid value: "${group}": must be a lower-case DNS subdomain (an API group, without a version)`);
    const res = strings(g.resources, `${p}.resources`, errs);
    const names = strings(g.resourceNames, `${p}.resourceNames`, errs);
    if (names.length > 0 && res.length === 0) errs.push(`${p}.resourceNames: Invalid value: using resourceNames requires at least one resource`);
    resources.push({ group, resources: res, resourceNames: names });
  });
  const namespaces = strings(r.namespaces, `${path}.namespaces`, errs);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errs.push(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  const omitManagedFields = optionalBool(r.omitManagedFields, `${path}.omitManagedFields`, errs);
  return {
    level,
    users: strings(r.users, `${path}.users`, errs),
    userGroups: strings(r.userGroups, `${path}.userGroups`, errs),
    verbs: strings(r.verbs, `${path}.verbs`, errs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(r.omitStages, `${path}.omitStages`, errs),
    ...(omitManagedFields !== undefined ? { omitManagedFields } : {}),
  };
}

/**
 * The first rule that matches decides (kube-apiserver's policy checker); no match is level None.
 * A rule's omitStages add to the policy's; its omitManagedFields, when set, overrides the policy's.
 */
export function evaluatePolicy(policy: AuditPolicy, a: AuditAttributes): AuditDecision {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, a)) continue;
    return {
      level: rule.level,
      omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return { level: 'None', omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields };
}

function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users.length > 0 && !r.users.includes(a.user.name)) return false;
  if (r.userGroups.length > 0 && !a.user.groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (a.resource) {
    if (r.nonResourceURLs.length > 0) return false;
    return matchesResource(r, a.resource);
  }
  if (r.resources.length > 0 || r.namespaces.length > 0) return false;
  return r.nonResourceURLs.length === 0 || r.nonResourceURLs.some((spec) => matchesNonResource(spec, a.path));
}

function matchesResource(r: PolicyRule, res: NonNullable<AuditAttributes['resource']>): boolean {
  // Cluster-scoped objects have the namespace "" (a rule listing "" selects them).
  if (r.namespaces.length > 0 && !r.namespaces.includes(res.namespace ?? '')) return false;
  if (r.resources.length === 0) return true;
  const combined = res.subresource ? `${res.resource}/${res.subresource}` : res.resource;
  for (const gr of r.resources) {
    if (gr.group !== res.group) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(res.name ?? '')) continue;
    for (const spec of gr.resources) {
      if (spec === '*' || spec === combined) return true;
      if (res.subresource && spec.startsWith('*/') && spec.slice(2) === res.subresource) return true;
      if (spec.endsWith('/*') && spec.slice(0, -2) === res.resource) return true;
    }
  }
  return false;
}

function matchesNonResource(spec: string, path: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.slice(0, -1));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownKeys(o: Record<string, unknown>, known: ReadonlySet<string>, prefix: string, errs: string[]): void {
  for (const k of Object.keys(o)) if (!known.has(k)) errs.push(`${prefix}${k}: unknown field`);
}

function strings(v: unknown, path: string, errs: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.push(`${path}: must be a list of strings`);
    return [];
  }
  return v as string[];
}

function stages(v: unknown, path: string, errs: string[]): AuditStage[] {
  const out: AuditStage[] = [];
  strings(v, path, errs).forEach((s, i) => {
    if (AUDIT_STAGES.includes(s as AuditStage)) out.push(s as AuditStage);
    else errs.push(`${path}[${i}]: Invalid value: "${s}": allowed stages are ${AUDIT_STAGES.join(',')}`);
  });
  return out;
}

function optionalBool(v: unknown, path: string, errs: string[]): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    errs.push(`${path}: must be true or false`);
    return undefined;
  }
  return v;
}
