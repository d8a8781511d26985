/**
 * metav1.Status failures: every error reply of the API server is one of these
 * (docs/reference/kubernetes-api.md §10). Handlers throw {@link StatusError}; the request edge
 * converts it (and AgentError codes from storage) into the JSON reply once.
 */
import { errCode, type ErrorCode } from '@nodelet/base';

// The Status cause/details shapes are the client's too: one definition in @nodelet/api.
export type { StatusCause, StatusDetails } from '@nodelet/api';
import type { StatusCause, StatusDetails } from '@nodelet/api';
import { TransformError } from '../storage/encryption/encrypting-store.js';

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /**
   * Seconds for the `Retry-After` header; 0 = no header. Unset: 429 and 503 replies say 1 (the
   * in-flight limits). client-go retries a request by itself while the header is there, so a
   * refusal the caller should see at once (an exhausted disruption budget) sets 0.
   */
  readonly retryAfter: number | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails, retryAfter?: number) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.retryAfter = retryAfter;
  }
  toBody(): StatusBody {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `pods` for core, `deployments.apps` otherwise: how the apiserver names a resource in messages. */
export function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export const badRequest = (message: string): StatusError => new StatusError(400, 'BadRequest', message);
export const notFound = (resource: string, group: string, name: string): StatusError =>
  new StatusError(404, 'NotFound', `${qualified(resource, group)} "${name}" not found`, { name, group: group || undefined, kind: resource });
export const alreadyExists = (resource: string, group: string, name: string): StatusError =>
  new StatusError(409, 'AlreadyExists', `${qualified(resource, group)} "${name}" already exists`, { name, group: group || undefined, kind: resource });
export const conflict = (resource: string, group: string, name: string): StatusError =>
  new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: group || undefined, kind: resource },
  );
export const expired = (message: string): StatusError => new StatusError(410, 'Expired', message);
export const methodNotAllowed = (message: string): StatusError => new StatusError(405, 'MethodNotAllowed', message);
export const unauthorized = (): StatusError => new StatusError(401, 'Unauthorized', 'Unauthorized');
export const forbidden = (message: string): StatusError => new StatusError(403, 'Forbidden', message);
export const unsupportedMediaType = (contentType: string, accepted: readonly string[]): StatusError =>
  new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, {
    causes: [{ reason: 'UnsupportedMediaType', message: contentType }],
  });
export const tooLarge = (limit: number): StatusError => new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

/** 422 Invalid with one cause per field error (kubectl prints each cause). */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): StatusError {
  const list = causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).join(', ');
  return new StatusError(422, 'Invalid', `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${list}`, { name, group: group || undefined, kind, causes });
}

const BY_CODE: Partial<Record<ErrorCode, [number, string]>> = {
  ERR_NOT_FOUND: [404, 'NotFound'],
  ERR_ALREADY_EXISTS: [409, 'AlreadyExists'],
  ERR_CONFLICT: [409, 'Conflict'],
  ERR_INVALID_ARGUMENT: [400, 'BadRequest'],
  ERR_GONE: [410, 'Expired'],
  ERR_UNAUTHENTICATED: [401, 'Unauthorized'],
  ERR_PERMISSION_DENIED: [403, 'Forbidden'],
  ERR_UNAVAILABLE: [503, 'ServiceUnavailable'],
  ERR_DEADLINE_EXCEEDED: [504, 'Timeout'],
  ERR_RESOURCE_EXHAUSTED: [429, 'TooManyRequests'],
  ERR_UNIMPLEMENTED: [415, 'UnsupportedMediaType'],
};

/** Any thrown value → StatusError (internal errors keep their message out of the reply). */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  // A stored value no encryption provider reads: kube-apiserver names the key (and not the cause's secrets).
  if (err instanceof TransformError) return new StatusError(500, 'InternalError', `Internal error occurred: ${err.message}`);
  const code = errCode(err);
  const mapped = code ? BY_CODE[code] : undefined;
  if (mapped) return new StatusError(mapped[0], mapped[1], (err as Error).message);
  return new StatusError(500, 'InternalError', 'Internal error occurred: see the server log');
}
