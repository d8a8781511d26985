/**
 * Authorization (kube-apiserver's WithAuthorization, Node → RBAC): a resource request is
 * authorized with its verb, group, resource, subresource, namespace and name (`403 Forbidden`
 * otherwise) and becomes the handler's {@link RequestScope}. A GET/HEAD of a non-resource path
 * gets its `get` decision recorded; the handler refuses it (403) only for a path it serves, so an
 * unknown path stays a 404. `metrics.k8s.io` paths are authorized by their handler
 * (metrics-api.ts), which alone knows their resources.
 */
import type { Logger } from '@nodelet/base';
import { forbiddenMessage } from '../auth/authorizer.js';
import type { Authorizer, RequestAttributes, UserInfo } from '../auth/types.js';
import type { RequestScope, ServerContext } from '../context.js';
import { nameFromFieldSelector, parsePath, verbOf } from '../router.js';
import { forbidden } from '../status.js';
import type { Filter } from './chain.js';

/** Pod subresources that open a stream into the pod: authorized as `create` (as upstream does for WebSocket upgrades). */
export const STREAM_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

/** Throws 403 unless `user` may do `a`. */
export async function authorizeOrThrow(authorizer: Authorizer, user: UserInfo, a: RequestAttributes): Promise<void> {
  const d = await authorizer.authorize(user, a);
  if (!d.allowed) throw forbidden(forbiddenMessage(user, a, d.reason || undefined));
}

export function authorizationFilter(o: { ctx: ServerContext; authorizer: Authorizer; logger: Logger; isMetricsPath: (pathname: string) => boolean }): Filter {
  return async (r, next) => {
    const url = r.url!;
    const user = r.user!;
    const method = r.req.method ?? 'GET';
    if (o.isMetricsPath(url.pathname)) return next();
    const parsed = parsePath(o.ctx, url.pathname);
    if (parsed.type === 'resource') {
      const p = parsed.path;
      const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
      let verb = verbOf(method, !!p.name, watch);
      // Streams into a pod need create, whatever the HTTP method (WebSocket upgrades are GETs).
      if (p.served.def.kind === 'Pod' && p.subresource && STREAM_SUBRESOURCES.has(p.subresource)) verb = 'create';
      // A list or watch of one object by metadata.name is authorized for that name (resourceNames rules).
      const name = p.name ?? (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(url.searchParams.get('fieldSelector')) : undefined);
      await authorizeOrThrow(o.authorizer, user, { verb, group: p.group, resource: p.served.def.plural, subresource: p.subresource, namespace: p.namespace, name });
      r.scope = {
        ctx: o.ctx,
        req: r.req,
        res: r.res,
        url,
        user,
        log: o.logger,
        signal: r.signal,
        served: p.served,
        namespace: p.namespace,
        name: p.name,
        subresource: p.subresource,
        ...(p.proxyPath !== undefined ? { proxyPath: p.proxyPath } : {}),
      } satisfies RequestScope;
    } else if (method === 'GET' || method === 'HEAD') {
      r.nonResourceAllowed = (await o.authorizer.authorize(user, { verb: 'get', path: url.pathname })).allowed;
    }
    await next();
  };
}
