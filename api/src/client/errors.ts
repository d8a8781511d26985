/**
 * The ONE place where HTTP replies and socket failures of the API server become AgentErrors.
 * Callers classify with `hasCode(err, 'ERR_CONFLICT')` and read the server's Status from
 * `statusOf(err)`; nobody above this file looks at HTTP status numbers.
 */
import { AgentError, isAgentError, type ErrorCode } from '@nodelet/base';
import type { Status } from '../types/meta.js';

/** An API server reply that was not 2xx, with the server's Status object (or one synthesised from the reply). */
export class ApiStatusError extends AgentError {
  /** The Kubernetes Status the server sent (always present; synthesised when the body was not a Status). */
  readonly status: Status;
  /** The HTTP status code of the reply. */
  readonly httpStatus: number;
  /** Seconds the server asked us to wait (429/503 `Retry-After` or `details.retryAfterSeconds`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, opts: { status: Status; httpStatus: number; retryable: boolean; retryAfterSeconds?: number }) {
    super(code, message, { retryable: opts.retryable });
    this.name = 'ApiStatusError';
    this.status = opts.status;
    this.httpStatus = opts.httpStatus;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}

/** The server's Status carried by `err`, if it came from an API server reply (works across package copies). */
export function statusOf(err: unknown): Status | undefined {
  if (!isAgentError(err)) return undefined;
  const s = (err as { status?: unknown }).status;
  return typeof s === 'object' && s !== null ? (s as Status) : undefined;
}

function codeFor(httpStatus: number, reason: string | undefined): { code: ErrorCode; retryable: boolean } {
  switch (httpStatus) {
    case 400:
    case 413:
    case 415:
    case 422:
      return { code: 'ERR_INVALID_ARGUMENT', retryable: false };
    case 401:
      return { code: 'ERR_UNAUTHENTICATED', retryable: false };
    case 403:
      return { code: 'ERR_PERMISSION_DENIED', retryable: false };
    case 404:
      return { code: 'ERR_NOT_FOUND', retryable: false };
    case 405:
    case 501:
      return { code: 'ERR_UNIMPLEMENTED', retryable: false };
    case 409:
      // Same HTTP code, two meanings: the Status reason tells them apart.
      return reason === 'AlreadyExists' ? { code: 'ERR_ALREADY_EXISTS', retryable: false } : { code: 'ERR_CONFLICT', retryable: true };
    case 410:
      return { code: 'ERR_GONE', retryable: false };
    case 429:
      return { code: 'ERR_UNAVAILABLE', retryable: true };
    default:
      if (httpStatus >= 500) return { code: 'ERR_UNAVAILABLE', retryable: true };
      return { code: 'ERR_INTERNAL', retryable: false };
  }
}

function parseStatus(body: string): Status | undefined {
  try {
    const v = JSON.parse(body) as unknown;
    if (typeof v === 'object' && v !== null && (v as Status).kind === 'Status') return v as Status;
  } catch {
    // not JSON: fall through to a synthesised Status
  }
  return undefined;
}

/**
 * The whole seconds of a `Retry-After` header (the first, if repeated); undefined when absent or
 * not a plain non-negative integer (client-go's checkWait reads it with Atoi the same way; the
 * HTTP-date form is not used by kube-apiserver).
 */
export function retryAfterHeaderSeconds(header: string | string[] | undefined): number | undefined {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/**
 * Translates a non-2xx reply. `what` names the request for the message (`GET /api/v1/pods/x`).
 */
export function errorFromResponse(httpStatus: number, body: string, what: string, retryAfterHeader?: string | string[]): ApiStatusError {
  const status: Status = parseStatus(body) ?? {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: httpStatus,
    message: body.trim().slice(0, 500) || `HTTP ${httpStatus}`,
  };
  const { code, retryable } = codeFor(httpStatus, status.reason);
  const retryAfterSeconds = status.details?.retryAfterSeconds ?? retryAfterHeaderSeconds(retryAfterHeader);
  const reason = status.reason ? ` (${status.reason})` : '';
  return new ApiStatusError(code, `${what}: ${status.message ?? `HTTP ${httpStatus}`}${reason}`, {
    status,
    httpStatus,
    retryable,
    retryAfterSeconds,
  });
}

/** Translates a watch ERROR event's Status (e.g. 410 Expired after compaction). */
export function errorFromWatchStatus(status: Status, what: string): ApiStatusError {
  const httpStatus = status.code ?? 500;
  const { code, retryable } = codeFor(httpStatus, status.reason);
  return new ApiStatusError(code, `${what}: ${status.message ?? 'watch error'}${status.reason ? ` (${status.reason})` : ''}`, {
    status,
    httpStatus,
    retryable,
  });
}

const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'ENOTFOUND', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE',
]);

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE',
]);

/** Translates a socket-level failure (no HTTP reply). Abort errors are not passed here. */
export function errorFromSocket(err: unknown, what: string, server: string): AgentError {
  const sysCode = (err as { code?: string } | null)?.code;
  const detail = err instanceof Error ? err.message : String(err);
  if (sysCode !== undefined && TLS_CODES.has(sysCode)) {
    return new AgentError(
      'ERR_FAILED_PRECONDITION',
      `${what}: TLS verification of ${server} failed (${sysCode}); set certificate-authority(-data) in the kubeconfig to the server's CA`,
      { cause: err, retryable: false },
    );
  }
  const transient = sysCode === undefined || TRANSIENT_SOCKET_CODES.has(sysCode);
  return new AgentError('ERR_UNAVAILABLE', `${what}: cannot reach API server ${server}: ${detail}`, {
    cause: err,
    retryable: transient,
  });
}
