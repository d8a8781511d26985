/**
 * Media types: parsing Accept/Content-Type exactly (parameters matter: `v=v2` is not
 * `v=v2beta1`, reference §3), decoding request bodies, and the 3 MiB body limit.
 */
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import YAML from 'yaml';
import { decodeProtobufObject } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { badRequest, tooLarge, unsupportedMediaType, StatusError } from './status.js';
import { auditRequestBody } from './audit/hooks.js';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;
/**
 * Deepest nesting a decoded body may have. Go's encoding/json (and so kube-apiserver) stops at
 * 10,000, but here `JSON.parse` is the only step that survives that: `structuredClone` overflows
 * V8's stack near 1,900 levels and `JSON.stringify` near 4,000, and every write clones and
 * encodes the object (a 5,000-deep body was a 500). 1,000 leaves room for the frames below
 * them; real objects (even CRD schemas) are far shallower.
 */
export const MAX_NESTING_DEPTH = 1_000;

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseMediaTypes(header: string | undefined): MediaType[] {
  if (!header) return [];
  return header.split(',').map(parseMediaType).filter((m) => m.type !== '');
}

export function parseMediaType(s: string): MediaType {
  const [type = '', ...rest] = s.split(';').map((p) => p.trim());
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { type: type.toLowerCase(), params };
}

/** True when the client asked for a meta.k8s.io/v1 Table (kubectl get). */
/** Whether an `Accept-Encoding` header takes gzip (with a q above 0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return parseMediaTypes(acceptEncoding).some((e) => e.type === 'gzip' && Number(e.params.q ?? 1) > 0);
}

export function wantsTable(accept: string | undefined): boolean {
  return parseMediaTypes(accept).some((m) => m.type === 'application/json' && m.params.as === 'Table' && m.params.g === 'meta.k8s.io' && m.params.v === 'v1');
}

/** True when the client accepts the aggregated discovery v2 document. */
export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  return parseMediaTypes(accept).some(
    (m) => m.type === 'application/json' && m.params.g === 'apidiscovery.k8s.io' && m.params.v === 'v2' && m.params.as === 'APIGroupDiscoveryList',
  );
}

export const AGGREGATED_DISCOVERY_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export const OBJECT_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'] as const;
export const PATCH_MEDIA_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

/**
 * Reads the whole body, failing with 413 past the limit (the rest of the upload is discarded).
 * When `signal` aborts first (the request timed out, filters/timeout.ts), the read rejects with
 * its reason and the request is destroyed, closing a connection whose body stalled.
 */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES, signal?: AbortSignal): Promise<Buffer> {
  signal?.throwIfAborted();
  const stop = (): void => void req.destroy(signal!.reason instanceof Error ? signal!.reason : new DOMException('the request was cancelled', 'AbortError'));
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await readAll(req, limit);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

/**
 * Collects the body with a `data` listener and `finished` (end, error or close), not `for await`:
 * the async iterator cost a promise and a `read()` per chunk on every create (3 % of the server
 * thread's busy time in the create bench). Past the limit the read fails at once and the rest of
 * the upload flows on unread, so the 413 goes out and the connection serves its next request,
 * as when Content-Length already declares too much (the iterator's return destroyed the request,
 * after which the rest of the upload stalled the connection). A finished request destroys
 * itself (autoDestroy) before `finished` calls back; a request already ended or destroyed when
 * the read starts settles as `finished` says (empty, or its error).
 */
function readAll(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      stop();
      req.resume();
      reject(tooLarge(limit));
    };
    const stop = finished(req, { writable: false }, (err) => {
      stop();
      req.off('data', onData);
      if (err) return reject(err);
      const body = Buffer.concat(chunks);
      try {
        auditRequestBody(req, body);
      } catch (e) {
        return reject(e);
      }
      resolve(body);
    });
    req.on('data', onData);
  });
}

/** The request body of a handler scope (already read, or read now). */
export async function bodyOf(s: { req: IncomingMessage; body?: Buffer; signal?: AbortSignal }): Promise<Buffer> {
  return s.body ?? readBody(s.req, MAX_BODY_BYTES, s.signal);
}

/** Decodes a create/update body by Content-Type into a JSON object (400 malformed, 415 unknown type). */
export function decodeObjectBody(contentType: string | undefined, body: Buffer): Record<string, unknown> {
  const type = parseMediaType(contentType ?? 'application/json').type || 'application/json';
  let value: unknown;
  // parseJson and parseYaml check the nesting depth themselves; a protobuf body is checked below.
  if (type === 'application/json') value = parseJson(body);
  else if (type === 'application/yaml') value = parseYaml(body);
  else if (type === 'application/vnd.kubernetes.protobuf') {
    try {
      value = decodeProtobufObject(body).object;
    } catch (err) {
      if (hasCode(err, 'ERR_UNIMPLEMENTED')) {
        throw new StatusError(415, 'UnsupportedMediaType', `${(err as Error).message} (for example: kubectl create ... --dry-run=client -o yaml | kubectl create -f -)`);
      }
      throw badRequest(`unable to decode protobuf body: ${(err as Error).message}`);
    }
  } else throw unsupportedMediaType(type, OBJECT_MEDIA_TYPES);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('the request body must be a single JSON object');
  if (type === 'application/vnd.kubernetes.protobuf' && nestedDeeperThan(value, MAX_NESTING_DEPTH)) throw badRequest(`unable to decode the request body: exceeded max depth of ${MAX_NESTING_DEPTH}`);
  return value as Record<string, unknown>;
}

/** True when `value` nests objects/arrays deeper than `max` levels (checked without recursion). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw badRequest('the request body is empty');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badRequest(`json parse error: ${(err as Error).message}`);
  }
  if (nestedDeeperThan(value, MAX_NESTING_DEPTH)) throw badRequest(`json parse error: exceeded max depth of ${MAX_NESTING_DEPTH}`);
  return value;
}

export function parseYaml(body: Buffer): unknown {
  if (body.length === 0) throw badRequest('the request body is empty');
  let value: unknown;
  try {
    const docs = YAML.parseAllDocuments(body.toString('utf8'));
    if (!Array.isArray(docs) || docs.length !== 1) throw new Error('expected exactly one YAML document');
    const doc = docs[0]!;
    if (doc.errors.length) throw doc.errors[0];
    value = doc.toJS();
  } catch (err) {
    throw badRequest(`yaml parse error: ${(err as Error).message}`);
  }
  if (nestedDeeperThan(value, MAX_NESTING_DEPTH)) throw badRequest(`yaml parse error: exceeded max depth of ${MAX_NESTING_DEPTH}`);
  return value;
}
