/** Writing replies: JSON objects, lists, Tables and Status errors. */
import type { ServerResponse } from 'node:http';
import { constants as zlib, gzipSync } from 'node:zlib';
import { decodeProtobufObject } from '@nodelet/api';
import type { ApiObject } from './object.js';
import type { ResourceDef } from './resource.js';
import { DEFAULT_TABLE } from './table/others.js';
import { toStatusError } from './status.js';
import { acceptsGzip, wantsTable } from './media.js';
import { withTypeMeta } from './context.js';
import { auditResponseBody } from './audit/hooks.js';

export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  auditResponseBody(res, body);
  writeText(res, code, JSON.stringify(body), contentType);
}

/** A JSON reply already serialised; `body` gives the object to the audit log when it wants it. */
function sendJsonText(res: ServerResponse, code: number, text: string, body: () => unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  auditResponseBody(res, body);
  writeText(res, code, text, 'application/json');
}

function writeText(res: ServerResponse, code: number, text: string, contentType: string): void {
  writeBody(res, code, text.length >= GZIP_THRESHOLD_BYTES ? Buffer.from(text) : text, contentType);
}

/**
 * kube-apiserver's response compression: a reply of 128 KiB or more is gzipped (at the fastest
 * level, as upstream) when the client accepts it — a list of 3,000 pods is 5 MB of JSON. Watches
 * are streams and never go through here.
 */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

function writeBody(res: ServerResponse, code: number, body: string | Uint8Array, contentType: string): void {
  const headers: Record<string, string | number> = { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' };
  let out = body;
  if (typeof body !== 'string' && body.byteLength >= GZIP_THRESHOLD_BYTES) {
    headers.Vary = 'Accept-Encoding';
    if (acceptsGzip(res.req?.headers['accept-encoding'])) {
      out = gzipSync(body, { level: zlib.Z_BEST_SPEED });
      headers['Content-Encoding'] = 'gzip';
    }
  }
  headers['Content-Length'] = typeof out === 'string' ? Buffer.byteLength(out) : out.byteLength;
  res.writeHead(code, headers);
  res.end(out);
}

/** A reply body already encoded (protobuf objects and lists). */
export function sendBytes(res: ServerResponse, code: number, body: Uint8Array, contentType: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  auditResponseBody(res, () => decodeProtobufObject(body).object);
  writeBody(res, code, body, contentType);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const status = toStatusError(err);
  const retryAfter = status.retryAfter ?? (status.code === 429 || status.code === 503 ? 1 : 0);
  if (retryAfter > 0) res.setHeader('Retry-After', String(retryAfter));
  sendJson(res, status.code, status.toBody());
}

/** PartialObjectMetadata for Table rows (includeObject=Metadata, kubectl's default). */
export function partialMetadata(obj: ApiObject): Record<string, unknown> {
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
}

export interface TableOptions {
  includeObject: 'None' | 'Metadata' | 'Object';
  withColumns: boolean;
}

export function tableOf(def: ResourceDef, objs: readonly ApiObject[], now: number, meta: Record<string, unknown>, opts: TableOptions): Record<string, unknown> {
  const printer = def.table ?? DEFAULT_TABLE;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    ...(opts.withColumns ? { columnDefinitions: printer.columns.map((c) => ({ ...c, format: c.format ?? '' })) } : {}),
    rows: objs.map((o) => ({
      cells: printer.cells(o, now),
      ...(opts.includeObject === 'None' ? {} : { object: opts.includeObject === 'Object' ? withTypeMeta(def, o) : partialMetadata(o) }),
    })),
  };
}

export function includeObjectOf(url: URL): TableOptions['includeObject'] {
  const v = url.searchParams.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/**
 * One object: a single-row Table when asked for, else the object. `json`: the object's JSON
 * already made (a create's, registry.ts createdJsonOf), sent instead of serialising it again.
 */
export function sendObject(res: ServerResponse, code: number, def: ResourceDef, obj: ApiObject, accept: string | undefined, url: URL, now: number, json?: string): void {
  if (wantsTable(accept)) {
    sendJson(res, code, tableOf(def, [obj], now, { resourceVersion: obj.metadata.resourceVersion }, { includeObject: includeObjectOf(url), withColumns: true }));
    return;
  }
  if (json !== undefined) return sendJsonText(res, code, json, () => withTypeMeta(def, obj));
  sendJson(res, code, withTypeMeta(def, obj));
}
