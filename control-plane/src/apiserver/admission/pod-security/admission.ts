/**
 * The PodSecurity admission plugin (upstream k8s.io/pod-security-admission, the kube-apiserver
 * `PodSecurity` plugin): each namespace's labels choose a level and version per mode —
 *
 *   enforce ─▶ a pod that violates it is refused (403, `violates PodSecurity "…"`)
 *   audit   ─▶ the violation goes in the request's audit annotations
 *   warn    ─▶ a `Warning` header `would violate PodSecurity "…": …` (kubectl prints it)
 *
 * Workload resources (Deployments, Jobs, …, PodTemplates) are audited and warned about, never
 * refused: their pods are judged when created. Namespaces with bad labels are refused (422); a
 * change that tightens enforce lists the existing pods that would now be refused, as warnings.
 * Exemptions (users, namespaces, runtime classes) and the defaults come from the server's
 * admission configuration (config.ts). Validating only: it never changes the object.
 */
import type { ServerContext } from '../../context.js';
import { findMirrored } from '../../mirror.js';
import { isPlainObject, type ApiObject, type Json } from '../../object.js';
import { invalid, qualified, StatusError } from '../../status.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { podMetaOf, type PodMeta } from './check.js';
import type { PodSecurityConfig } from './config.js';
import { allowed, evaluatePod, forbiddenDetail, type Violations } from './evaluator.js';
import { checkNamespacePods, exemptNamespaceWarning } from './namespace.js';
import {
  AUDIT_ANNOTATION_PREFIX, compareLevels, DEFAULT_POLICY, formatLevelVersion, fullyPrivileged, policyFromLabels, PRIVILEGED_LATEST, sameLevelVersion,
  type LabelError, type LevelVersion, type Policy,
} from './policy.js';
import { isSignificantPodUpdate } from './pod-update.js';

const NO_EXEMPTIONS = { usernames: new Set<string>(), namespaces: new Set<string>(), runtimeClasses: new Set<string>() };
/** Privileged everywhere, nothing exempt: a server started without an admission configuration. */
export const DEFAULT_POD_SECURITY: PodSecurityConfig = { defaults: DEFAULT_POLICY, exemptions: NO_EXEMPTIONS };

/** Pod subresources that cannot change what the checks read. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** The pod template of each workload resource (group/plural); undefined: the object has none. */
const TEMPLATES: ReadonlyMap<string, (o: ApiObject) => unknown> = new Map([
  ['/replicationcontrollers', (o: ApiObject) => (o.spec as Json | undefined)?.template],
  ['/podtemplates', (o: ApiObject) => (o as Json).template ?? {}],
  ...['replicasets', 'deployments', 'statefulsets', 'daemonsets'].map((p) => [`apps/${p}`, (o: ApiObject) => (o.spec as Json | undefined)?.template ?? {}] as const),
  ['batch/jobs', (o: ApiObject) => (o.spec as Json | undefined)?.template ?? {}],
  ['batch/cronjobs', (o: ApiObject) => (((o.spec as Json | undefined)?.jobTemplate as Json | undefined)?.spec as Json | undefined)?.template ?? {}],
]);

const annotate = (r: AdmissionRequest, key: string, value: string): void => r.recorder?.annotate(AUDIT_ANNOTATION_PREFIX + key, value);

/** `metadata.labels[<label>]: Invalid value: "<v>": <why>`, one per bad label (Go's field.Error). */
const labelCause = (e: LabelError): { reason: string; field: string; message: string } => ({
  reason: 'FieldValueInvalid',
  field: `metadata.labels[${e.label}]`,
  message: `Invalid value: ${JSON.stringify(e.value)}: ${e.message}`,
});

/** Go's errors.Aggregate text: one error alone, several in brackets. */
function aggregate(errors: LabelError[]): string {
  const texts = errors.map((e) => `${labelCause(e).field}: ${labelCause(e).message}`);
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}

/** A namespace's parsed policy, by the namespace object the mirror holds (replaced, never changed in place, by each write). */
const parsedPolicies = new WeakMap<ApiObject, { resourceVersion: unknown; defaults: Policy; parsed: ReturnType<typeof policyFromLabels> }>();

/**
 * The policy of a namespace's labels: parsed once per namespace object and resourceVersion (every
 * pod create in the namespace asks), not per request.
 */
function policyOfNamespace(ns: ApiObject, defaults: Policy): ReturnType<typeof policyFromLabels> {
  const cached = parsedPolicies.get(ns);
  if (cached && cached.resourceVersion === ns.metadata.resourceVersion && cached.defaults === defaults) return cached.parsed;
  const parsed = policyFromLabels(ns.metadata.labels, defaults);
  parsedPolicies.set(ns, { resourceVersion: ns.metadata.resourceVersion, defaults, parsed });
  return parsed;
}

async function namespaceOf(ctx: ServerContext, name: string): Promise<ApiObject | undefined> {
  const served = ctx.resource('', 'v1', 'namespaces');
  return served ? findMirrored(ctx, served, undefined, name) : undefined;
}

function exemption(cfg: PodSecurityConfig, r: AdmissionRequest): string | undefined {
  if (r.namespace && cfg.exemptions.namespaces.has(r.namespace)) return 'namespace';
  if (r.user.name && cfg.exemptions.usernames.has(r.user.name)) return 'user';
  return undefined;
}

/**
 * Judges one pod or pod template against the namespace's policy: enforce (pods only), then audit,
 * then warn, each result reused when two modes name the same level and version.
 */
function judge(cfg: PodSecurityConfig, r: AdmissionRequest, policy: Policy, errors: LabelError[], meta: PodMeta, spec: Json, enforce: boolean): void {
  const runtimeClass = spec.runtimeClassName;
  if (typeof runtimeClass === 'string' && runtimeClass !== '' && cfg.exemptions.runtimeClasses.has(runtimeClass)) {
    annotate(r, 'exempt', 'runtimeClass');
    return;
  }
  if (errors.length) annotate(r, 'error', `Failed to parse policy: ${aggregate(errors)}`);
  const results = new Map<string, Violations>();
  const resultOf = (lv: LevelVersion): Violations => {
    const key = formatLevelVersion(lv);
    let v = results.get(key);
    if (!v) results.set(key, (v = evaluatePod(lv, meta, spec)));
    return v;
  };
  let refusal: StatusError | undefined;
  if (enforce) {
    annotate(r, 'enforce-policy', formatLevelVersion(policy.enforce));
    const v = resultOf(policy.enforce);
    if (!allowed(v)) {
      const resource = qualified(r.def.plural, r.def.group);
      const name = r.name ?? '';
      refusal = new StatusError(403, 'Forbidden', `${resource} "${name}" is forbidden: violates PodSecurity "${formatLevelVersion(policy.enforce)}": ${forbiddenDetail(v)}`, {
        name,
        group: r.def.group || undefined,
        kind: r.def.plural,
      });
    }
  }
  const audit = resultOf(policy.audit);
  if (!allowed(audit)) annotate(r, 'audit-violations', `would violate PodSecurity "${formatLevelVersion(policy.audit)}": ${forbiddenDetail(audit)}`);
  // A request about to be refused gets the refusal, not a warning too.
  if (refusal) throw refusal;
  const warn = resultOf(policy.warn);
  if (!allowed(warn)) r.recorder?.warn(`would violate PodSecurity "${formatLevelVersion(policy.warn)}": ${forbiddenDetail(warn)}`);
}

async function admitPod(ctx: ServerContext, cfg: PodSecurityConfig, r: AdmissionRequest): Promise<void> {
  if (r.subresource && IGNORED_POD_SUBRESOURCES.has(r.subresource)) return;
  const exempt = exemption(cfg, r);
  if (exempt) return annotate(r, 'exempt', exempt);
  const ns = await namespaceOf(ctx, r.namespace ?? '');
  if (!ns) {
    const message = `failed to lookup namespace "${r.namespace ?? ''}"`;
    annotate(r, 'error', `Internal error occurred: ${message}`);
    throw new StatusError(500, 'InternalError', `Internal error occurred: ${message}`);
  }
  const { policy, errors } = policyOfNamespace(ns, cfg.defaults);
  if (!errors.length && fullyPrivileged(policy)) return annotate(r, 'enforce-policy', formatLevelVersion(PRIVILEGED_LATEST));
  const pod = r.object!;
  if (r.operation === 'UPDATE' && r.oldObject && !isSignificantPodUpdate(pod, r.oldObject)) return;
  judge(cfg, r, policy, errors, podMetaOf(pod.metadata), isPlainObject(pod.spec) ? pod.spec : {}, true);
}

async function admitWorkload(ctx: ServerContext, cfg: PodSecurityConfig, r: AdmissionRequest, templateOf: (o: ApiObject) => unknown): Promise<void> {
  if (r.subresource) return;
  const exempt = exemption(cfg, r);
  if (exempt) return annotate(r, 'exempt', exempt);
  const ns = await namespaceOf(ctx, r.namespace ?? '');
  if (!ns) return annotate(r, 'error', `failed to lookup namespace "${r.namespace ?? ''}": namespaces "${r.namespace ?? ''}" not found`);
  const { policy, errors } = policyOfNamespace(ns, cfg.defaults);
  if (!errors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
  const template = templateOf(r.object!);
  if (template === undefined || template === null) return;
  const t = isPlainObject(template) ? template : {};
  judge(cfg, r, policy, errors, podMetaOf(t.metadata), isPlainObject(t.spec) ? t.spec : {}, false);
}

async function admitNamespace(ctx: ServerContext, cfg: PodSecurityConfig, r: AdmissionRequest): Promise<void> {
  if (r.subresource) return;
  const ns = r.object!;
  const name = ns.metadata.name ?? r.name ?? '';
  const { policy, errors } = policyFromLabels(ns.metadata.labels, cfg.defaults);
  const refuseLabels = (): never => {
    throw invalid('Namespace', '', name, errors.map(labelCause));
  };
  const exempt = cfg.exemptions.namespaces.has(name);
  if (r.operation === 'CREATE') {
    if (errors.length) refuseLabels();
    const warning = exempt ? exemptNamespaceWarning(name, policy, cfg.defaults, ns.metadata.labels) : undefined;
    if (warning) r.recorder?.warn(warning);
    return;
  }
  const old = policyFromLabels(r.oldObject?.metadata.labels, cfg.defaults);
  if (errors.length && (!old.errors.length || JSON.stringify(errors) !== JSON.stringify(old.errors))) refuseLabels();
  // Only a stricter enforce policy can turn existing pods into violations.
  if (sameLevelVersion(policy.enforce, old.policy.enforce) || policy.enforce.level === 'privileged') return;
  if (policy.enforce.version === old.policy.enforce.version && compareLevels(policy.enforce.level, old.policy.enforce.level) < 1) return;
  if (exempt) {
    const warning = exemptNamespaceWarning(name, policy, cfg.defaults, ns.metadata.labels);
    if (warning) r.recorder?.warn(warning);
    return;
  }
  for (const w of await checkNamespacePods(ctx, cfg, name, policy.enforce)) r.recorder?.warn(w);
}

export const podSecurityAdmission: AdmissionPlugin = async (ctx, r) => {
  if ((r.operation !== 'CREATE' && r.operation !== 'UPDATE') || !r.object) return;
  const cfg = ctx.podSecurity ?? DEFAULT_POD_SECURITY;
  const key = `${r.def.group}/${r.def.plural}`;
  if (key === '/namespaces') return admitNamespace(ctx, cfg, r);
  if (key === '/pods') return admitPod(ctx, cfg, r);
  const templateOf = TEMPLATES.get(key);
  if (templateOf) return admitWorkload(ctx, cfg, r, templateOf);
};
