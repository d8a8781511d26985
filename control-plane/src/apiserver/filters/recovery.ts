/**
 * The outermost filter (kube-apiserver's panic recovery): whatever a filter or the handler lets
 * escape becomes the request's failure reply, logged when it is a server error, and the request
 * is logged at debug when it ends. It never rejects, so a request can never become an unhandled
 * rejection.
 */
import { failureStatus, writeRawStatus } from '@nodelet/api';
import type { Logger } from '@nodelet/base';
import { sendError } from '../respond.js';
import { toStatusError } from '../status.js';
import type { ApiRequest, Filter } from './chain.js';

export function recoveryFilter(log: Logger): Filter {
  return async (r, next) => {
    const { req, res } = r;
    // A reply write that fails (the client went away) must not become an uncaught 'error'.
    res.on('error', (err) => log.debug({ err, method: req.method }, 'Response write failed'));
    try {
      await next();
    } catch (err) {
      failRequest(r, err, log);
    } finally {
      log.debug({ method: req.method, path: pathOf(r), code: res.statusCode, user: r.user?.name ?? '', ms: Math.round(performance.now() - r.started) }, 'Request');
    }
  };
}

/**
 * Writes `err` as the request's failure: a `Status` when nothing has gone out yet (raw on an
 * upgrade's socket); the end of the reply when its head is already out.
 */
export function failRequest(r: ApiRequest, err: unknown, log: Logger): void {
  const status = toStatusError(err);
  // A request whose signal was aborted (timed out, or the client left) fails as a consequence:
  // not a server fault worth an error line.
  if (status.code >= 500 && !r.signal.aborted) log.error({ err, method: r.req.method, path: pathOf(r) }, 'Request failed');
  if (r.signal.aborted) log.debug({ err, method: r.req.method, path: pathOf(r) }, 'Request failed after it was cancelled');
  if (r.upgrade) writeRawStatus(r.upgrade.socket, failureStatus(status.code, status.reason, status.message, status.details));
  else if (r.res.headersSent) r.res.end();
  else sendError(r.res, status);
}

function pathOf(r: ApiRequest): string {
  return r.url?.pathname ?? (r.req.url ?? '').split('?')[0]!;
}
