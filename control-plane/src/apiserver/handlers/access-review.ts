/**
 * The review resources; nothing is stored:
 * - `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews` (`kubectl auth can-i`): asks
 *   the authorizer about the caller, answers in `status.allowed`/`status.reason`;
 * - `POST /apis/authentication.k8s.io/v1/tokenreviews` (the agent's webhook authentication of
 *   bearer tokens on its node API): answers `status.authenticated` and `status.user`.
 */
import { authorize } from '../auth/authorizer.js';
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest } from '../status.js';

export async function handleSelfSubjectAccessReview(s: RequestScope): Promise<void> {
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const spec = (body.spec ?? {}) as Json;
  const ra = isPlainObject(spec.resourceAttributes) ? (spec.resourceAttributes as Record<string, string | undefined>) : undefined;
  const nra = isPlainObject(spec.nonResourceAttributes) ? (spec.nonResourceAttributes as Record<string, string | undefined>) : undefined;
  if (!ra === !nra) throw badRequest('exactly one of spec.resourceAttributes and spec.nonResourceAttributes is required');
  const getPod = (ns: string, name: string) => s.ctx.resource('', 'v1', 'pods')!.registry.find(ns, name);
  const listPods = async (ns: string) => (await s.ctx.resource('', 'v1', 'pods')!.registry.list({ namespace: ns, filter: () => true })).items;
  // kubectl fills in its default namespace even for cluster-scoped resources; drop it for those.
  const version = ra?.version || (ra?.group ? undefined : 'v1');
  const served = ra ? (version ? s.ctx.resource(ra.group ?? '', version, ra.resource ?? '') : s.ctx.resourceByGroup(ra.group ?? '', ra.resource ?? '')) : undefined;
  const namespace = served && !served.def.namespaced ? undefined : ra?.namespace || undefined;
  const decision = ra
    ? await authorize(
        s.user,
        { verb: ra.verb ?? '', group: ra.group ?? '', resource: ra.resource, subresource: ra.subresource || undefined, namespace, name: ra.name || undefined },
        { getPod, listPods },
      )
    : await authorize(s.user, { verb: nra!.verb ?? '', path: nra!.path ?? '' }, { getPod, listPods });
  sendJson(s.res, 201, {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: decision.allowed ? { allowed: true } : { allowed: false, reason: decision.reason },
  });
}

export async function handleTokenReview(s: RequestScope): Promise<void> {
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const token = (body.spec as Json | undefined)?.token;
  if (typeof token !== 'string' || token === '') throw badRequest('spec.token is required');
  const user = await s.ctx.authenticateToken(token);
  sendJson(s.res, 201, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { token },
    status: user ? { authenticated: true, user: { username: user.name, groups: [...user.groups] } } : { authenticated: false, user: {} },
  });
}
