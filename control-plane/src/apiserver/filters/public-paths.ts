/**
 * Paths answered before authentication: the health checks (`/healthz`, `/livez`, `/readyz` and
 * their sub-paths, 503 once the server is shutting down) and the server-join bundle, which
 * checks its own credential (server-join.ts). Everything else goes on to authentication.
 */
import type { ServerContext } from '../context.js';
import { serveServerJoinBundle } from '../server-join.js';
import { SERVER_JOIN_PATH, type ServerJoinBundle } from '@nodelet/api';
import type { Filter } from './chain.js';

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

export function isHealthPath(pathname: string): boolean {
  return HEALTH_PATHS.has(pathname) || pathname.startsWith('/healthz/') || pathname.startsWith('/readyz/') || pathname.startsWith('/livez/');
}

export function publicPathsFilter(o: { ctx: ServerContext; serverJoinBundle?: () => Promise<ServerJoinBundle> }): Filter {
  return async (r, next) => {
    const path = r.url!.pathname;
    if (isHealthPath(path)) {
      const down = o.ctx.shutdown.aborted;
      r.res.writeHead(down ? 503 : 200, { 'Content-Type': 'text/plain; charset=utf-8' });
      r.res.end(down ? 'shutting down' : 'ok');
      return;
    }
    if (path === SERVER_JOIN_PATH) return serveServerJoinBundle(o.ctx, r.req, r.res, o.serverJoinBundle);
    return next();
  };
}
