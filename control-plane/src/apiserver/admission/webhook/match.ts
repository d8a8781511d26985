/**
 * Which webhooks a request goes to (upstream admission/plugin/webhook: rules, namespace and
 * object matchers): the rules (operation, group, version, resource/subresource, scope), then the
 * namespaceSelector and the objectSelector. Requests for the webhook configuration kinds
 * themselves never go to webhooks, so a broken webhook cannot lock its own fix out.
 */
import { labelSelectorFromObject, matchLabels, type LabelSelector, type MutatingWebhook, type RuleWithOperations } from '@nodelet/api';
import type { ServerContext } from '../../context.js';
import { findMirrored } from '../../mirror.js';
import type { ApiObject } from '../../object.js';
import type { AdmissionRequest } from '../types.js';

/** The admission configuration resources webhooks never see (upstream IsExemptAdmissionConfigurationResource). */
const EXEMPT = new Set(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']);

/** True for a request no webhook may see: writes of admission configuration objects. */
export function isExempt(r: AdmissionRequest): boolean {
  return r.def.group === 'admissionregistration.k8s.io' && EXEMPT.has(r.def.plural);
}

const has = (list: readonly string[] | undefined, v: string): boolean => !!list && (list.includes('*') || list.includes(v));

// `pods`, `pods/status`, `*`, `*/status`, `pods/*` and `*/*` against the request's resource and subresource.
function resourceMatches(patterns: readonly string[] | undefined, resource: string, subresource: string | undefined): boolean {
  for (const p of patterns ?? []) {
    if (p === '*/*') return true;
    const slash = p.indexOf('/');
    const res = slash < 0 ? p : p.slice(0, slash);
    const sub = slash < 0 ? undefined : p.slice(slash + 1);
    if (res !== '*' && res !== resource) continue;
    if (sub === undefined ? subresource === undefined : subresource !== undefined && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

/** One rule against the request (a Namespace object is cluster-scoped, as upstream's scope check says). */
export function ruleMatches(rule: RuleWithOperations, r: AdmissionRequest): boolean {
  if (!has(rule.operations, r.operation)) return false;
  if (!has(rule.apiGroups, r.def.group) || !has(rule.apiVersions, r.def.version)) return false;
  if (!resourceMatches(rule.resources, r.def.plural, r.subresource)) return false;
  const scope = rule.scope ?? '*';
  return scope === '*' || (scope === 'Namespaced') === r.def.namespaced;
}

const isEmpty = (s: LabelSelector | undefined): boolean => !s || (!Object.keys(s.matchLabels ?? {}).length && !(s.matchExpressions ?? []).length);

/** An object's labels against a selector ({} matches everything, even no object). */
function selects(s: LabelSelector | undefined, obj: ApiObject | undefined): boolean {
  if (isEmpty(s)) return true;
  return !!obj && matchLabels(labelSelectorFromObject(s), obj.metadata.labels);
}

/**
 * Whether the webhook's selectors pick the request: the objectSelector against the new or the old
 * object; the namespaceSelector against the labels of the namespace (of the object itself when it
 * is a Namespace), ignored for other cluster-scoped objects.
 */
export async function selectorsMatch(ctx: ServerContext, h: MutatingWebhook, r: AdmissionRequest): Promise<boolean> {
  if (!selects(h.objectSelector, r.object) && !selects(h.objectSelector, r.oldObject)) return false;
  if (isEmpty(h.namespaceSelector)) return true;
  if (r.def.group === '' && r.def.plural === 'namespaces') return selects(h.namespaceSelector, r.object ?? r.oldObject);
  if (!r.def.namespaced || !r.namespace) return true;
  const ns = await findMirrored(ctx, ctx.resource('', 'v1', 'namespaces')!, undefined, r.namespace);
  return selects(h.namespaceSelector, ns ?? { metadata: {} });
}

/** The rules and selectors together. */
export async function webhookMatches(ctx: ServerContext, h: MutatingWebhook, r: AdmissionRequest): Promise<boolean> {
  if (!(h.rules ?? []).some((rule) => ruleMatches(rule, r))) return false;
  return selectorsMatch(ctx, h, r);
}
