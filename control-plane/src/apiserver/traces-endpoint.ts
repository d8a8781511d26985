/**
 * `GET /debug/nodelet/traces/<traceId>`: the spans this control plane kept for one trace (API
 * server and scheduler), for `nodelet trace pod`. A non-resource URL, so RBAC decides who may read
 * it (cluster-admin's `*`; no default role grants it to anyone else).
 */
import type { ServerResponse } from 'node:http';
import { isTraceId, type TraceSpansResponse } from '@nodelet/api/tracing';
import type { PodJourneys } from './pod-journeys.js';
import { sendJson } from './respond.js';
import { StatusError } from './status.js';

export const TRACES_PATH_PREFIX = '/debug/nodelet/traces/';

/** True when `pathname` is this endpoint's (authorization comes first, then {@link serveTraces}). */
export function isTracesPath(pathname: string): boolean {
  return pathname.startsWith(TRACES_PATH_PREFIX);
}

/** Answers the request; 404 when tracing is off, 400 for a malformed trace id. */
export function serveTraces(journeys: PodJourneys | undefined, pathname: string, res: ServerResponse): void {
  if (!journeys) throw new StatusError(404, 'NotFound', 'tracing is not enabled on this server', {});
  const traceId = pathname.slice(TRACES_PATH_PREFIX.length);
  if (!isTraceId(traceId)) throw new StatusError(400, 'BadRequest', `"${traceId}" is not a trace id (32 lower-case hex digits)`, {});
  const body: TraceSpansResponse = { traceId, spans: journeys.spans(traceId) };
  sendJson(res, 200, body);
}
