/**
 * The review kinds; nothing is stored, a POST computes the reply:
 *
 *   selfsubjectaccessreviews   `kubectl auth can-i` — may the caller do X?
 *   selfsubjectrulesreviews    `kubectl auth can-i --list` — what may the caller do in namespace N?
 *   subjectaccessreviews       may user U (groups, extra) do X? — the agent asks this for its node API
 *   localsubjectaccessreviews  the same, confined to the URL's namespace
 *   tokenreviews               who is this bearer token? — the agent's webhook authentication
 *   selfsubjectreviews         `kubectl auth whoami`
 *
 * Who may create each is decided by the authorizer like any resource (system:basic-user for the
 * self reviews, system:auth-delegator/system:node for the others).
 */
import type { PolicyRule } from '@nodelet/api';
import { isAdmin } from '../auth/authorizer.js';
import { nodeNameOf } from '../auth/node-authorizer.js';
import { NODELET_NODE_RULES, NODE_RULES } from '../auth/rbac/bootstrap-roles.js';
import type { RequestAttributes, UserInfo } from '../auth/types.js';
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest } from '../status.js';

type Handler = (s: RequestScope) => Promise<void>;

async function bodyJson(s: RequestScope): Promise<Json> {
  return decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
}

function reply(s: RequestScope, kind: string, apiVersion: string, spec: unknown, status: unknown, namespace?: string): void {
  sendJson(s.res, 201, { kind, apiVersion, metadata: { creationTimestamp: null, ...(namespace ? { namespace } : {}) }, spec, status });
}

type Attrs = Record<string, string | undefined>;

/** spec.resourceAttributes / nonResourceAttributes → authorizer attributes (exactly one must be set). */
function attributesOf(s: RequestScope, spec: Json): RequestAttributes {
  const ra = isPlainObject(spec.resourceAttributes) ? (spec.resourceAttributes as Attrs) : undefined;
  const nra = isPlainObject(spec.nonResourceAttributes) ? (spec.nonResourceAttributes as Attrs) : undefined;
  if (!ra === !nra) throw badRequest('exactly one of spec.resourceAttributes and spec.nonResourceAttributes is required');
  if (nra) return { verb: nra.verb ?? '', path: nra.path ?? '' };
  // kubectl fills in its default namespace even for cluster-scoped resources; drop it for those.
  const version = ra!.version || (ra!.group ? undefined : 'v1');
  const served = version ? s.ctx.resource(ra!.group ?? '', version, ra!.resource ?? '') : s.ctx.resourceByGroup(ra!.group ?? '', ra!.resource ?? '');
  const namespace = served && !served.def.namespaced ? undefined : ra!.namespace || undefined;
  return { verb: ra!.verb ?? '', group: ra!.group ?? '', resource: ra!.resource, subresource: ra!.subresource || undefined, namespace, name: ra!.name || undefined };
}

async function accessStatus(s: RequestScope, user: UserInfo, a: RequestAttributes): Promise<Json> {
  const d = await s.ctx.authorizer.authorize(user, a);
  return d.allowed ? { allowed: true, ...(d.reason ? { reason: d.reason } : {}) } : { allowed: false, ...(d.reason ? { reason: d.reason } : {}) };
}

/** The user a (Local)SubjectAccessReview asks about. */
function subjectOf(spec: Json): UserInfo {
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
  if (!user && groups.length === 0) throw badRequest('at least one of user or group must be specified');
  const extra = isPlainObject(spec.extra) ? (spec.extra as Record<string, string[]>) : undefined;
  return { name: user, groups, ...(typeof spec.uid === 'string' && spec.uid ? { uid: spec.uid } : {}), ...(extra ? { extra } : {}) };
}

const handleSelfSubjectAccessReview: Handler = async (s) => {
  const spec = ((await bodyJson(s)).spec ?? {}) as Json;
  reply(s, 'SelfSubjectAccessReview', 'authorization.k8s.io/v1', spec, await accessStatus(s, s.user, attributesOf(s, spec)));
};

const handleSubjectAccessReview: Handler = async (s) => {
  const spec = ((await bodyJson(s)).spec ?? {}) as Json;
  reply(s, 'SubjectAccessReview', 'authorization.k8s.io/v1', spec, await accessStatus(s, subjectOf(spec), attributesOf(s, spec)));
};

const handleLocalSubjectAccessReview: Handler = async (s) => {
  const spec = ((await bodyJson(s)).spec ?? {}) as Json;
  if (isPlainObject(spec.nonResourceAttributes)) throw badRequest('nonResourceAttributes: disallowed on this kind of request');
  const ra = (isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : {}) as Attrs;
  if (ra.namespace && ra.namespace !== s.namespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${s.namespace ?? ''}`);
  const a = attributesOf(s, { ...spec, resourceAttributes: { ...ra, namespace: s.namespace } });
  reply(s, 'LocalSubjectAccessReview', 'authorization.k8s.io/v1', spec, await accessStatus(s, subjectOf(spec), a), s.namespace);
};

/** What the caller may do in a namespace: RBAC rules, plus the privileged group's and the Node authorizer's static rules. */
const handleSelfSubjectRulesReview: Handler = async (s) => {
  const spec = ((await bodyJson(s)).spec ?? {}) as Json;
  const namespace = typeof spec.namespace === 'string' && spec.namespace ? spec.namespace : undefined;
  const rules: PolicyRule[] = [];
  if (isAdmin(s.user)) rules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] });
  if (nodeNameOf(s.user)) rules.push(...NODE_RULES, ...NODELET_NODE_RULES);
  const rbac = s.ctx.rbac.rulesFor(s.user, namespace);
  rules.push(...rbac.rules);
  const resourceRules = rules.filter((r) => !r.nonResourceURLs?.length).map((r) => ({
    verbs: r.verbs, ...(r.apiGroups ? { apiGroups: r.apiGroups } : {}), ...(r.resources ? { resources: r.resources } : {}), ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
  }));
  const nonResourceRules = rules.filter((r) => r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs }));
  const incomplete = rbac.missingRoles.length > 0 || !!nodeNameOf(s.user);
  reply(s, 'SelfSubjectRulesReview', 'authorization.k8s.io/v1', spec, {
    resourceRules,
    nonResourceRules,
    incomplete,
    ...(rbac.missingRoles.length ? { evaluationError: `missing ${rbac.missingRoles.join(', ')}` } : {}),
  });
};

const handleTokenReview: Handler = async (s) => {
  const body = await bodyJson(s);
  const token = (body.spec as Json | undefined)?.token;
  if (typeof token !== 'string' || token === '') throw badRequest('spec.token is required');
  const user = await s.ctx.authenticateToken(token);
  reply(s, 'TokenReview', 'authentication.k8s.io/v1', { token }, user
    ? { authenticated: true, user: { username: user.name, ...(user.uid ? { uid: user.uid } : {}), groups: [...user.groups], ...(user.extra ? { extra: user.extra } : {}) } }
    : { authenticated: false, user: {} });
};

const handleSelfSubjectReview: Handler = async (s) => {
  await bodyJson(s);
  const u = s.user;
  reply(s, 'SelfSubjectReview', 'authentication.k8s.io/v1', undefined, {
    userInfo: { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: [...u.groups], ...(u.extra ? { extra: u.extra } : {}) },
  });
};

export const EPHEMERAL_HANDLERS: Readonly<Record<string, Handler>> = {
  SelfSubjectAccessReview: handleSelfSubjectAccessReview,
  SelfSubjectRulesReview: handleSelfSubjectRulesReview,
  SubjectAccessReview: handleSubjectAccessReview,
  LocalSubjectAccessReview: handleLocalSubjectAccessReview,
  TokenReview: handleTokenReview,
  SelfSubjectReview: handleSelfSubjectReview,
};
