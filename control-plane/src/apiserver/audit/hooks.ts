/**
 * Where request and response bodies reach the audit event. The body reader (media.ts readBody)
 * and the reply writers (respond.ts) call these with the request or response they serve; the
 * request's audit handle, if any, picks the body up. Kept apart from the auditor so that those
 * low-level modules import two functions and nothing else.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a handle does with the bodies (auditor.ts). */
export interface BodySink {
  requestBody(body: Buffer): void;
  responseBody(body: unknown | (() => unknown)): void;
  annotate(key: string, value: string): void;
}

const byRequest = new WeakMap<IncomingMessage, BodySink>();
const byResponse = new WeakMap<ServerResponse, BodySink>();

/** Registers `sink` as the audit handle of this request/response (the auditor calls it). */
export function attachAuditSink(req: IncomingMessage, res: ServerResponse | undefined, sink: BodySink): void {
  byRequest.set(req, sink);
  if (res) byResponse.set(res, sink);
}

/** The request body as read, before decoding (media.ts). Cheap when the request is not audited. */
export function auditRequestBody(req: IncomingMessage, body: Buffer): void {
  byRequest.get(req)?.requestBody(body);
}

/**
 * The authorizer's decision on a resource request, as upstream annotates events with it:
 * `authorization.k8s.io/decision` (`allow` or `forbid`) and `authorization.k8s.io/reason`.
 */
export function auditAuthorization(req: IncomingMessage, d: { allowed: boolean; reason?: string }): void {
  const sink = byRequest.get(req);
  if (!sink) return;
  sink.annotate('authorization.k8s.io/decision', d.allowed ? 'allow' : 'forbid');
  if (d.reason) sink.annotate('authorization.k8s.io/reason', d.reason);
}

/** An admission plugin's audit annotation (admission/recorder.ts), e.g. PodSecurity's. */
export function auditAnnotation(req: IncomingMessage, key: string, value: string): void {
  byRequest.get(req)?.annotate(key, value);
}

/**
 * The object a reply carries (respond.ts): the value sent as JSON, or a function that decodes
 * an encoded reply, called only when the event's level logs response bodies.
 */
export function auditResponseBody(res: ServerResponse, body: unknown | (() => unknown)): void {
  byResponse.get(res)?.responseBody(body);
}
