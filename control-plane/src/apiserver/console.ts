/**
 * The web console's static files at `/ui/` (docs/console.md). The page is built by esbuild at
 * build time (console/build.mjs, `make console`) into a folder of an `index.html` and hashed
 * `assets/`; this filter serves that folder, read once at start, before authentication: the files
 * hold no data, and every data call the page makes is an API request with the user's own bearer
 * token, authenticated and authorized like kubectl's.
 *
 * The filter answers only paths under `/ui/` (and `/ui`, redirected) and only GET/HEAD; anything
 * else goes on down the chain untouched, so no API path is reachable without authentication.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Logger } from '@nodelet/base';
import type { Filter } from './filters/chain.js';

/** Where the console is served. */
export const CONSOLE_PATH = '/ui/';

/**
 * The page's Content-Security-Policy: its own scripts and styles only (no inline script or
 * style), data only from this origin. CSP Level 3 `'self'` also matches `wss:` to this origin,
 * so no wider `wss:` source is granted.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.map': 'application/json',
};

interface ConsoleFile {
  body: Buffer;
  gzip: Buffer;
  type: string;
  /** Hashed names (under assets/) never change content: cached for a year, never revalidated. */
  immutable: boolean;
}

/** The built console, read into memory (it is small: docs/console.md states its size). */
export interface ConsoleBundle {
  dir: string;
  files: ReadonlyMap<string, ConsoleFile>;
}

/** The folder `make console` builds into: `<repo>/build/console`, found from this module's place (src/ or dist/). */
export function defaultConsoleDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'build', 'console');
}

/** Reads the built console from `dir`; undefined when it has no index.html (not built). */
export function loadConsoleBundle(dir: string): ConsoleBundle | undefined {
  let names: string[];
  try {
    if (!statSync(join(dir, 'index.html')).isFile()) return undefined;
    names = walk(dir);
  } catch {
    // No index.html (or no folder): the console was not built; the caller says so.
    return undefined;
  }
  const files = new Map<string, ConsoleFile>();
  for (const path of names) {
    const rel = relative(dir, path).split(sep).join('/');
    const body = readFileSync(path);
    files.set(rel, { body, gzip: gzipSync(body, { level: 9 }), type: TYPES[extname(rel)] ?? 'application/octet-stream', immutable: rel.startsWith('assets/') });
  }
  return { dir, files };
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function isConsolePath(pathname: string): boolean {
  return pathname === '/ui' || pathname.startsWith(CONSOLE_PATH);
}

/**
 * The filter serving `bundle` at `/ui/`; with no bundle (enabled but not built) `/ui/` answers 404
 * saying how to build it. Placed before authentication in the request chain (server.ts).
 */
export function consoleFilter(bundle: ConsoleBundle | undefined, log: Logger): Filter {
  if (!bundle) log.warn({ dir: defaultConsoleDir() }, 'The web console is enabled but not built (make console); /ui/ answers 404');
  return async (r, next) => {
    const url = r.url!;
    if (!isConsolePath(url.pathname)) return next();
    const { req, res } = r;
    const method = req.method ?? 'GET';
    const headers = { 'Content-Security-Policy': CONSOLE_CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' };
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { ...headers, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${method} is not allowed on the console's static files\n`);
      return;
    }
    if (url.pathname === '/ui') {
      res.writeHead(301, { ...headers, Location: CONSOLE_PATH });
      res.end();
      return;
    }
    const rel = url.pathname.slice(CONSOLE_PATH.length) || 'index.html';
    const file = bundle?.files.get(rel);
    if (!file) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(bundle ? 'not found\n' : 'the web console is not built: run `make console` and restart the server\n');
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? file.gzip : file.body;
    res.writeHead(200, {
      ...headers,
      'Content-Type': file.type,
      'Content-Length': body.length,
      // index.html names the hashed assets, so it is revalidated every time; they never change.
      'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      Vary: 'Accept-Encoding',
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    });
    res.end(method === 'HEAD' ? undefined : body);
  };
}
