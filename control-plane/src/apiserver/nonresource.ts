/** Non-resource endpoints: /version, discovery, OpenAPI. Health endpoints are in server.ts (no auth). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { aggregatedDiscovery, legacyApiVersions, legacyGroup, legacyGroupList, resourceList, SERVER_VERSION } from './discovery.js';
import { AGGREGATED_DISCOVERY_CONTENT_TYPE, wantsAggregatedDiscovery } from './media.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import { serveOpenApiV2 } from './openapi-v2.js';
import type { ResourceDef } from './resource.js';
import { RESOURCE_DEFS } from './resources.js';
import { sendJson } from './respond.js';
import { StatusError } from './status.js';

/** The paths answered below (some with 404 for a group or version not served). */
const NON_RESOURCE_PATHS = [/^\/version$/, /^\/apis?$/, /^\/api\/v1$/, /^\/apis\/[^/]+(\/[^/]+)?$/, /^\/openapi\/v[23]$/, /^\/openapi\/v3\/(api\/v1|apis\/[^/]+\/[^/]+)$/];

const notFound = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

/**
 * Answers a GET of a non-resource path; false when the path is not one of them. Discovery lists
 * `defs`. `authorize` runs once the path is known to be one of them and before anything is
 * written (it throws to refuse), so a caller not allowed the path gets its 403, not the document.
 */
export function serveNonResource(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  serverAddress: string,
  defs: readonly ResourceDef[] = RESOURCE_DEFS,
  authorize: () => void = () => {},
): boolean {
  const p = url.pathname.replace(/\/+$/, '') || '/';
  if (!NON_RESOURCE_PATHS.some((re) => re.test(p))) return false;
  authorize();
  const accept = req.headers.accept;
  if (p === '/version') return sendJson(res, 200, SERVER_VERSION), true;
  if (p === '/api' || p === '/apis') {
    if (wantsAggregatedDiscovery(accept)) sendJson(res, 200, aggregatedDiscovery(p === '/api', defs), AGGREGATED_DISCOVERY_CONTENT_TYPE);
    else sendJson(res, 200, p === '/api' ? legacyApiVersions(serverAddress) : legacyGroupList(defs));
    return true;
  }
  if (p === '/api/v1') return sendJson(res, 200, resourceList('', 'v1', defs)), true;
  let m = /^\/apis\/([^/]+)$/.exec(p);
  if (m) {
    const g = legacyGroup(m[1]!, defs);
    if (!g) throw notFound();
    return sendJson(res, 200, g), true;
  }
  m = /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
  if (m) {
    const list = resourceList(m[1]!, m[2]!, defs);
    if (!list) throw notFound();
    return sendJson(res, 200, list), true;
  }
  if (p === '/openapi/v3') return sendJson(res, 200, openApiIndex(defs)), true;
  m = /^\/openapi\/v3\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(p);
  if (m) {
    const doc = m[1] ? openApiDocument('', m[1], defs) : openApiDocument(m[2]!, m[3]!, defs);
    if (!doc) throw notFound();
    return sendJson(res, 200, doc), true;
  }
  if (p === '/openapi/v2') return serveOpenApiV2(req, res, defs), true;
  return false;
}
