/**
 * GET of one object and LIST (JSON, protobuf when preferred and the kind has a table, or Table;
 * label/field selectors, limit/continue).
 */
import { encodeProtobufList, encodeProtobufMessage } from '@nodelet/api';
import type { RequestScope } from '../context.js';
import { withTypeMeta } from '../context.js';
import { compileFilter } from '../filter.js';
import { wantsTable } from '../media.js';
import type { ResourceDef } from '../resource.js';
import { includeObjectOf, sendBytes, sendJson, sendObject, tableOf } from '../respond.js';
import { badRequest } from '../status.js';
import { negotiateWireMedia, notAcceptable, protobufBytes, PROTOBUF_CONTENT_TYPE, type WireMedia } from '../wire-media.js';

export async function handleGet(s: RequestScope): Promise<void> {
  const { def } = s.served;
  const wire = wireOf(s, def);
  const obj = await s.served.registry.get(s.namespace, s.name!, { signal: s.signal });
  if (wire.media === 'protobuf') {
    const bytes = protobufBytes(withTypeMeta(def, obj));
    if (bytes) return sendBytes(s.res, 200, bytes, PROTOBUF_CONTENT_TYPE);
    if (!wire.jsonAcceptable) throw notAcceptable(def.kind);
  }
  sendObject(s.res, 200, def, obj, s.req.headers.accept, s.url, s.ctx.now());
}

function wireOf(s: RequestScope, def: ResourceDef): WireMedia {
  if (wantsTable(s.req.headers.accept)) return { media: 'json', jsonAcceptable: true };
  return negotiateWireMedia(s.req.headers.accept, apiVersionOf(def), def.kind);
}

function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export async function handleList(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const q = s.url.searchParams;
  const filter = compileFilter(def, q.get('labelSelector'), q.get('fieldSelector'));
  const limitRaw = q.get('limit');
  const limit = limitRaw ? Number(limitRaw) : 0;
  if (!Number.isInteger(limit) || limit < 0) throw badRequest(`limit must be a non-negative integer, got "${limitRaw}"`);
  const cont = q.get('continue') || undefined;
  const rv = q.get('resourceVersion') || undefined;
  const match = q.get('resourceVersionMatch') || undefined;
  if (cont && rv && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  if (match && !rv) throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
  let revision: number | undefined;
  if (rv && rv !== '0') {
    const n = Number(rv);
    if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`invalid resource version "${rv}"`);
    // Exact (or NotOlderThan with a limit, as upstream) reads at that revision; otherwise the newest is "not older".
    if (match === 'Exact' || (match !== 'NotOlderThan' && limit > 0)) revision = n;
  }
  const wire = wireOf(s, def);
  const page = await registry.list({ namespace: s.namespace, filter, limit, continueToken: cont, revision, signal: s.signal });
  const meta: Record<string, unknown> = { resourceVersion: page.resourceVersion };
  if (page.continueToken) meta.continue = page.continueToken;
  if (page.remainingItemCount !== undefined) meta.remainingItemCount = page.remainingItemCount;
  if (wantsTable(s.req.headers.accept)) {
    sendJson(s.res, 200, tableOf(def, page.items, s.ctx.now(), meta, { includeObject: includeObjectOf(s.url), withColumns: true }));
    return;
  }
  if (wire.media === 'protobuf') {
    const items: Uint8Array[] = [];
    for (const o of page.items) {
      const raw = encodeProtobufMessage(apiVersionOf(def), def.kind, o);
      if (!raw) break;
      items.push(raw);
    }
    // One item the table cannot carry sends the whole list as JSON (a reply has one media type).
    if (items.length === page.items.length) return sendBytes(s.res, 200, encodeProtobufList(apiVersionOf(def), def.kind, meta, items), PROTOBUF_CONTENT_TYPE);
    if (!wire.jsonAcceptable) throw notAcceptable(def.kind);
  }
  sendJson(s.res, 200, {
    kind: `${def.kind}List`,
    apiVersion: apiVersionOf(def),
    metadata: meta,
    items: page.items.map((o) => withTypeMeta(def, o)),
  });
}
