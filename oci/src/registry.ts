/**
 * A read-only registry serving an image store over the OCI distribution pull API
 * (distribution-spec `spec.md`, "Pull" and "Checking if content exists"):
 *
 *   GET  /v2/                                  200 {}
 *   HEAD|GET /v2/<name>/manifests/<tag|digest> manifest, Content-Type = its media type
 *   HEAD|GET /v2/<name>/blobs/<digest>         blob; GET honours `Range: bytes=a-b` (206)
 *   GET  /v2/<name>/tags/list                  {"name","tags"}
 *   GET  /v2/_catalog                          {"repositories"}
 *   anything else under /v2/ that writes       405 UNSUPPORTED
 *
 * Every success carries `Docker-Content-Digest` and `Content-Length` (containerd takes the digest
 * from a HEAD only when the length is known). Errors are the spec's JSON
 * `{"errors":[{"code","message","detail"}]}`. `index.json` is re-read per request, so images
 * built into the store while the registry runs are served at once. Plain HTTP: bind it to
 * loopback or a lab network only. Optionally every request must carry HTTP Basic credentials
 * (`basicAuth`, for tests of image pull secrets): without them the answer is 401 UNAUTHORIZED
 * with a `WWW-Authenticate: Basic` challenge, as the distribution spec's token-less registries do.
 *
 * Mirror naming: containerd pulling `<host>/<name>` through a mirror (hosts.toml) asks for
 * `/v2/<name>/…?ns=<host>`; the repository is then the store name of `<host>/<name>`
 * (`library/busybox?ns=docker.io` → `busybox`, `x/y?ns=quay.io` → `x/y`; store-name.ts).
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError, hasCode, type Logger, noopLogger } from '@nodelet/base';
import { isDigest } from './digest.js';
import { blobPath, listImages, type StoredImage } from './layout.js';
import { MANIFEST_MEDIA_TYPES, MediaType } from './media-types.js';
import { isRepositoryName, isTag } from './reference.js';
import { mirroredRepositoryOf } from './store-name.js';

export interface RegistryOptions {
  /** Image store (OCI layout) to serve. */
  root: string;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  logger?: Logger;
  signal?: AbortSignal;
  /** Require these credentials (HTTP Basic) on every request. */
  basicAuth?: { username: string; password: string };
}

export interface Registry {
  port: number;
  /** `http://host:port` */
  url: string;
  /** `host:port`, the form image references and hosts.toml use. */
  hostPort: string;
  /** Stops accepting, closes idle and in-flight connections. Idempotent. */
  close(): Promise<void>;
}

type ErrorCodeName = 'UNAUTHORIZED' | 'MANIFEST_UNKNOWN' | 'BLOB_UNKNOWN' | 'NAME_UNKNOWN' | 'NAME_INVALID' | 'DIGEST_INVALID' | 'TAG_INVALID' | 'UNSUPPORTED' | 'RANGE_INVALID';

class RegistryHttpError extends Error {
  constructor(
    readonly status: number,
    readonly regCode: ErrorCodeName,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
  }
}

const ROUTE = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/;
const TAGS_ROUTE = /^\/v2\/(.+)\/tags\/list$/;

export async function startRegistry(opts: RegistryOptions): Promise<Registry> {
  const log = (opts.logger ?? noopLogger).child({ component: 'registry' });
  const expected = opts.basicAuth && `Basic ${Buffer.from(`${opts.basicAuth.username}:${opts.basicAuth.password}`).toString('base64')}`;
  const server = createServer((req, res) => {
    if (expected && req.headers.authorization !== expected) {
      res.setHeader('WWW-Authenticate', 'Basic realm="nodelet registry"');
      sendError(res, new RegistryHttpError(401, 'UNAUTHORIZED', 'authentication required'));
      return;
    }
    handle(opts.root, req, res).catch((err: unknown) => {
      if (err instanceof RegistryHttpError) {
        log.debug({ method: req.method, url: req.url, status: err.status, code: err.regCode }, 'Registry request failed');
        sendError(res, err);
      } else {
        log.warn({ method: req.method, url: req.url, err }, 'Registry internal error');
        if (!res.headersSent) sendError(res, new RegistryHttpError(500, 'UNSUPPORTED', 'internal error reading the image store'));
        else res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0, opts.signal);
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  log.info({ address: addr.address, port: addr.port, root: opts.root }, 'Registry listening');

  let closing: Promise<void> | undefined;
  const onAbort = (): void => void close();
  const close = (): Promise<void> => {
    opts.signal?.removeEventListener('abort', onAbort);
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  return { port: addr.port, url: `http://${hostForUrl}:${addr.port}`, hostPort: `${hostForUrl}:${addr.port}`, close };
}

function listen(server: Server, host: string, port: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'the address is in use (another registry or nodelet server?)' : err.message;
      reject(new AgentError('ERR_UNAVAILABLE', `registry cannot listen on ${host}:${port}: ${why}`, { cause: err }));
    });
    server.listen({ host, port }, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
}

async function handle(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://registry');
  const path = url.pathname;
  const method = req.method ?? 'GET';
  res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
  if (!path.startsWith('/v2/') && path !== '/v2') throw new RegistryHttpError(404, 'UNSUPPORTED', `"${path}" is not a registry API path`);
  if (method !== 'GET' && method !== 'HEAD') throw new RegistryHttpError(405, 'UNSUPPORTED', `this registry is read-only: ${method} is not allowed`);

  if (path === '/v2/' || path === '/v2') return sendJson(res, method, 200, {});
  if (path === '/v2/_catalog') {
    const names = [...new Set((await listImages(root)).map((i) => i.name))];
    return sendJson(res, method, 200, { repositories: names });
  }

  const ns = url.searchParams.get('ns');
  const tags = TAGS_ROUTE.exec(path);
  if (tags) {
    const name = repositoryFor(tags[1]!, ns);
    const images = await imagesOf(root, name);
    return sendJson(res, method, 200, { name, tags: images.map((i) => i.tag) });
  }

  const m = ROUTE.exec(path);
  if (!m) throw new RegistryHttpError(404, 'UNSUPPORTED', `"${path}" is not a registry API path`);
  const [, requested, kind, ref] = m as unknown as [string, string, 'manifests' | 'blobs', string];
  const name = repositoryFor(requested, ns);
  const images = await imagesOf(root, name);

  if (kind === 'manifests') {
    let digest: string;
    if (ref.includes(':')) {
      if (!isDigest(ref)) throw new RegistryHttpError(400, 'DIGEST_INVALID', `digest "${ref}" is not a sha256 digest`);
      digest = ref;
    } else {
      if (!isTag(ref)) throw new RegistryHttpError(400, 'TAG_INVALID', `tag "${ref}" is invalid`);
      const image = images.find((i) => i.tag === ref);
      if (!image) throw new RegistryHttpError(404, 'MANIFEST_UNKNOWN', `manifest "${name}:${ref}" is unknown`, { tag: ref });
      digest = image.digest;
    }
    let body: Buffer;
    try {
      body = await readFile(blobPath(root, digest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RegistryHttpError(404, 'MANIFEST_UNKNOWN', `manifest "${name}@${digest}" is unknown`, { digest });
      throw err;
    }
    const mediaType = manifestMediaType(body);
    if (!mediaType) throw new RegistryHttpError(404, 'MANIFEST_UNKNOWN', `"${digest}" is not a manifest`, { digest });
    res.writeHead(200, { 'Content-Type': mediaType, 'Content-Length': body.length, 'Docker-Content-Digest': digest, ETag: `"${digest}"` });
    res.end(method === 'HEAD' ? undefined : body);
    return;
  }

  if (!isDigest(ref)) throw new RegistryHttpError(400, 'DIGEST_INVALID', `digest "${ref}" is not a sha256 digest`);
  const file = blobPath(root, ref);
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RegistryHttpError(404, 'BLOB_UNKNOWN', `blob "${ref}" is unknown to repository "${name}"`, { digest: ref });
    throw err;
  }
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/octet-stream',
    'Docker-Content-Digest': ref,
    'Accept-Ranges': 'bytes',
    ETag: `"${ref}"`,
  };
  const range = req.headers.range;
  if (range !== undefined && method === 'GET') {
    const r = parseRange(range, size);
    if (!r) {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}`, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'RANGE_INVALID', message: `range "${range}" is not satisfiable for a blob of ${size} bytes` }] }));
      return;
    }
    res.writeHead(206, { ...headers, 'Content-Length': r.end - r.start + 1, 'Content-Range': `bytes ${r.start}-${r.end}/${size}` });
    streamFile(file, res, r.start, r.end);
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Length': size });
  if (method === 'HEAD' || size === 0) return void res.end();
  streamFile(file, res, 0, size - 1);
}

/** The store repository a request for `name` means: itself, or its mirror name when the request names its upstream `ns`. */
function repositoryFor(name: string, ns: string | null): string {
  if (ns === null) return name;
  try {
    return mirroredRepositoryOf(ns, name);
  } catch (err) {
    if (hasCode(err, 'ERR_INVALID_ARGUMENT')) throw new RegistryHttpError(400, 'NAME_INVALID', (err as Error).message, { name, ns });
    throw err;
  }
}

/** Images of repository `name`; NAME_INVALID / NAME_UNKNOWN otherwise. */
async function imagesOf(root: string, name: string): Promise<StoredImage[]> {
  if (!isRepositoryName(name)) throw new RegistryHttpError(400, 'NAME_INVALID', `repository name "${name}" is invalid`);
  const images = (await listImages(root)).filter((i) => i.name === name);
  if (images.length === 0) throw new RegistryHttpError(404, 'NAME_UNKNOWN', `repository "${name}" is not known to this registry`, { name });
  return images;
}

/**
 * The media type a manifest declares. OCI lets a manifest or index omit `mediaType` (imported
 * archives from some tools do); then its shape tells which OCI document it is.
 */
function manifestMediaType(body: Buffer): string | undefined {
  try {
    const doc = JSON.parse(body.toString('utf8')) as { mediaType?: unknown; manifests?: unknown; config?: unknown; layers?: unknown };
    if (doc.mediaType === undefined) return Array.isArray(doc.manifests) ? MediaType.ociIndex : doc.config && Array.isArray(doc.layers) ? MediaType.ociManifest : undefined;
    return typeof doc.mediaType === 'string' && MANIFEST_MEDIA_TYPES.has(doc.mediaType) ? doc.mediaType : undefined;
  } catch {
    return undefined;
  }
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range (multi-range is not needed by clients). */
export function parseRange(header: string, size: number): { start: number; end: number } | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return undefined;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (start >= size || end < start) return undefined;
  }
  return { start, end };
}

function streamFile(file: string, res: ServerResponse, start: number, end: number): void {
  const stream = createReadStream(file, { start, end });
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

function sendJson(res: ServerResponse, method: string, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(method === 'HEAD' ? undefined : text);
}

function sendError(res: ServerResponse, err: RegistryHttpError): void {
  const text = JSON.stringify({ errors: [{ code: err.regCode, message: err.message, detail: err.detail ?? null }] });
  res.writeHead(err.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}
