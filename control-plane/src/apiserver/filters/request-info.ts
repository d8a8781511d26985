/**
 * Request info (kube-apiserver's WithRequestInfo): parses the request target (400 when it does
 * not parse) and decides whether the request is long-running (limits.ts): watches, proxies and
 * the log/exec/attach/portforward subresources have no timeout and take no in-flight slot. An
 * upgrade is long-running by nature (pod streams, proxies and watches over a WebSocket are served;
 * anything else is refused right after authorization).
 */
import { parseRequestTarget } from '@nodelet/api';
import { isLongRunning } from '../limits.js';
import { badRequest } from '../status.js';
import type { Filter } from './chain.js';

export function requestInfoFilter(): Filter {
  return async (r, next) => {
    const url = parseRequestTarget(r.req.url);
    if (!url) throw badRequest(`malformed request target "${truncate(r.req.url ?? '')}"`);
    r.url = url;
    r.longRunning = !!r.upgrade || isLongRunning(r.req.method ?? 'GET', url);
    await next();
  };
}

function truncate(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s;
}
