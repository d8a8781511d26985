/**
 * What a request is about, for the audit policy and the event's `verb` and `objectRef`: the
 * router's reading of the path (kube-apiserver's RequestInfo). A path the router does not serve
 * (404, malformed) is audited as a non-resource request with the lower-case HTTP method as verb,
 * as upstream does for every non-resource path.
 */
import type { ServerContext } from '../context.js';
import { nameFromFieldSelector, parsePath, verbOf } from '../router.js';

export interface AuditRequestInfo {
  verb: string;
  path: string;
  resource?: { group: string; version: string; resource: string; subresource?: string; namespace?: string; name?: string };
}

export function auditRequestInfo(ctx: ServerContext, method: string, url: URL): AuditRequestInfo {
  const nonResource: AuditRequestInfo = { verb: method.toLowerCase(), path: url.pathname };
  let parsed: ReturnType<typeof parsePath>;
  try {
    parsed = parsePath(ctx, url.pathname);
  } catch {
    // Malformed or unknown resource path: the request gets its 400/404 elsewhere; audited as non-resource.
    return nonResource;
  }
  if (parsed.type !== 'resource') return nonResource;
  const p = parsed.path;
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  const verb = verbOf(method, !!p.name, watch);
  // As the authorizer sees it: a list or watch by metadata.name is about that one object.
  const name = p.name ?? (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(url.searchParams.get('fieldSelector')) : undefined);
  return {
    verb,
    path: url.pathname,
    resource: {
      group: p.group,
      version: p.version,
      resource: p.served.def.plural,
      ...(p.subresource ? { subresource: p.subresource } : {}),
      ...(p.namespace ? { namespace: p.namespace } : {}),
      ...(name ? { name } : {}),
    },
  };
}
