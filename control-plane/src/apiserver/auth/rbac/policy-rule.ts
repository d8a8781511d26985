/**
 * Matching of RBAC policy rules against request attributes, and rule coverage for escalation
 * checks — the semantics of k8s.io/kubernetes pkg/apis/rbac/v1 evaluation helpers:
 *
 * - verbs, apiGroups, resources: `*` matches everything;
 * - resources: `pods` matches the resource only, `pods/log` the subresource only, `*\/scale` the
 *   `scale` subresource of any resource;
 * - resourceNames: empty = any name; otherwise the request must name one of them (so a rule with
 *   names never allows `create` or `list`, which carry no name);
 * - nonResourceURLs: exact, or a prefix ending in `*`.
 */
import type { PolicyRule } from '@nodelet/api';
import type { RequestAttributes } from '../types.js';

const has = (list: readonly string[] | undefined, v: string): boolean => !!list && (list.includes('*') || list.includes(v));

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return has(rule.apiGroups, group);
}

export function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string | undefined): boolean {
  if (!rule.resourceNames?.length) return true;
  return name !== undefined && name !== '' && rule.resourceNames.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** Does `rule` allow the request? */
export function ruleAllows(rule: PolicyRule, a: RequestAttributes): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (a.path !== undefined) return nonResourceURLMatches(rule, a.path);
  return apiGroupMatches(rule, a.group ?? '') && resourceMatches(rule, a.resource ?? '', a.subresource) && resourceNameMatches(rule, a.name);
}

/**
 * Splits rules into atoms of one verb × one group × one resource (× one name when names are
 * given), or one verb × one URL — the unit of the escalation check.
 */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        if (rule.resourceNames?.length) for (const n of rule.resourceNames) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [n] });
        else out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
      }
    }
    for (const url of rule.nonResourceURLs ?? []) out.push({ verbs: [verb], nonResourceURLs: [url] });
  }
  return out;
}

/** Does one owner rule grant everything an atom (from {@link breakdownRule}) grants? */
function covers(owner: PolicyRule, atom: PolicyRule): boolean {
  if (!has(owner.verbs, atom.verbs[0]!)) return false;
  if (atom.nonResourceURLs) {
    const url = atom.nonResourceURLs[0]!;
    return (owner.nonResourceURLs ?? []).some((u) => u === '*' || u === url || (u.endsWith('*') && url.startsWith(u.slice(0, -1))));
  }
  if (!has(owner.apiGroups, atom.apiGroups![0]!)) return false;
  const res = atom.resources![0]!;
  const slash = res.indexOf('/');
  const sub = slash >= 0 ? res.slice(slash + 1) : undefined;
  const resOk = (owner.resources ?? []).some((r) => r === '*' || r === res || (sub !== undefined && r === `*/${sub}`));
  if (!resOk) return false;
  if (!owner.resourceNames?.length) return true;
  return !!atom.resourceNames?.length && owner.resourceNames.includes(atom.resourceNames[0]!);
}

/** The atoms of `wanted` that no rule of `held` covers (empty: `held` covers `wanted`). */
export function uncoveredRules(held: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of wanted) for (const atom of breakdownRule(rule)) if (!held.some((h) => covers(h, atom))) missing.push(atom);
  return missing;
}

/** A rule as upstream prints it in escalation errors: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function formatRule(r: PolicyRule): string {
  const q = (xs: readonly string[]): string => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${q(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${q(r.resources)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${q(r.resourceNames)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(r.nonResourceURLs)}`);
  parts.push(`Verbs:${q(r.verbs ?? [])}`);
  return `{${parts.join(', ')}}`;
}
