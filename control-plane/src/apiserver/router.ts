/** Parses REST paths into resource requests (kube-apiserver's RequestInfoFactory, simplified). */
import { decodePathSegments } from '@nodelet/api';
import type { ServedResource, ServerContext } from './context.js';
import { badRequest, StatusError } from './status.js';

export interface ResourcePath {
  group: string;
  version: string;
  served: ServedResource;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** `{pods,services,nodes}/<name>/proxy/<path>`: the path on the target (segments re-encoded, a trailing slash kept), `/` when none. */
  proxyPath?: string;
}

export type ParsedPath =
  | { type: 'resource'; path: ResourcePath }
  | { type: 'groupVersion'; group: string; version: string }
  | { type: 'other' };

export const notFoundPath = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

export function parsePath(ctx: ServerContext, pathname: string): ParsedPath {
  const segs = decodePathSegments(pathname);
  if (!segs) throw badRequest(`malformed percent-encoding in path "${pathname.length > 100 ? pathname.slice(0, 100) + '…' : pathname}"`);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) {
    group = '';
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 3) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return { type: 'other' };
  if (rest.length === 0) return { type: 'groupVersion', group, version };
  const lookup = (plural: string): ServedResource | undefined => ctx.resource(group, version, plural);
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const inner = lookup(rest[2]!);
    if (inner?.def.namespaced) {
      if (group === '' && rest[4] === 'proxy' && rest[3] && (inner.def.plural === 'pods' || inner.def.plural === 'services')) {
        return { type: 'resource', path: { group, version, served: inner, namespace: rest[1], name: rest[3], subresource: 'proxy', proxyPath: proxyPathOf(rest.slice(5), pathname) } };
      }
      if (rest.length > 5) throw notFoundPath();
      return { type: 'resource', path: { group, version, served: inner, namespace: rest[1], name: rest[3], subresource: rest[4] } };
    }
    if (rest.length === 3 && group === '') {
      // /api/v1/namespaces/<name>/status|finalize
      const ns = lookup('namespaces');
      if (!ns || !ns.def.subresources.some((s) => s.name === rest[2])) throw notFoundPath();
      return { type: 'resource', path: { group, version, served: ns, name: rest[1], subresource: rest[2] } };
    }
    throw notFoundPath();
  }
  const served = lookup(rest[0]!);
  if (served && group === '' && served.def.plural === 'nodes' && rest[2] === 'proxy' && rest[1]) {
    return { type: 'resource', path: { group, version, served, name: rest[1], subresource: 'proxy', proxyPath: proxyPathOf(rest.slice(3), pathname) } };
  }
  if (!served || rest.length > 3) throw notFoundPath();
  if (served.def.namespaced && rest.length > 1) throw notFoundPath();
  return { type: 'resource', path: { group, version, served, name: rest[1], subresource: rest[2] } };
}

/** The target path of a proxy request: the segments after `proxy`, re-encoded, with the request's trailing slash (upstream JoinPreservingTrailingSlash). */
function proxyPathOf(tail: string[], pathname: string): string {
  if (!tail.length) return '/';
  return '/' + tail.map(encodeURIComponent).join('/') + (pathname.endsWith('/') ? '/' : '');
}

/** The authorizer verb of a resource request. */
export function verbOf(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return hasName ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/**
 * `metadata.name=<n>` (or `==`) in a list/watch field selector: the request is for that one
 * object, and is authorized with its name (upstream RequestInfoFactory does the same).
 */
export function nameFromFieldSelector(selector: string | null): string | undefined {
  if (!selector) return undefined;
  let found: string | undefined;
  for (const term of selector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m && m[1]) found = m[1];
  }
  return found;
}
