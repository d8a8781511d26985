import { AgentError, isAbortError, isAgentError, type ErrorCode } from '@nodelet/base';

/**
 * etcd reports both "compacted" and "future revision" as gRPC OUT_OF_RANGE and tells them apart
 * only by the server's fixed error text (etcd's own client, `rpctypes`, matches these strings
 * too), so this edge is the one place that reads a message.
 */
const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';

/** The etcd3 client's error class names we translate (classes are per package copy). */
const BY_NAME: Record<string, ErrorCode> = {
  GRPCUnavailableError: 'ERR_UNAVAILABLE',
  BrokenCircuitError: 'ERR_UNAVAILABLE', // cockatiel: the client stopped trying after repeated failures
  ClientClosedError: 'ERR_UNAVAILABLE',
  GRPCDeadlineExceededError: 'ERR_DEADLINE_EXCEEDED',
  GRPCResourceExhastedError: 'ERR_RESOURCE_EXHAUSTED',
  GRPCInvalidArgumentError: 'ERR_INVALID_ARGUMENT',
  GRPCFailedPreconditionError: 'ERR_FAILED_PRECONDITION',
  GRPCPermissionDeniedError: 'ERR_PERMISSION_DENIED',
  EtcdPermissionDeniedError: 'ERR_PERMISSION_DENIED',
  GRPCUnauthenticatedError: 'ERR_UNAUTHENTICATED',
  EtcdAuthenticationFailedError: 'ERR_UNAUTHENTICATED',
  EtcdInvalidAuthTokenError: 'ERR_UNAUTHENTICATED',
  GRPCNotImplementedError: 'ERR_UNIMPLEMENTED',
};

export function isCompactedError(err: unknown): boolean {
  return err instanceof Error && err.message.includes(COMPACTED);
}

/** Translates an etcd3 client error into an AgentError (AbortErrors and AgentErrors pass through). */
export function toStorageError(err: unknown, what: string, endpoints: readonly string[]): unknown {
  if (isAgentError(err) || isAbortError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes(COMPACTED)) return new AgentError('ERR_GONE', `${what}: the requested revision has been compacted`, { cause: err });
  if (message.includes(FUTURE)) return new AgentError('ERR_INVALID_ARGUMENT', `${what}: the requested revision is in the future`, { cause: err });
  const name = err instanceof Error ? err.constructor.name : '';
  const code = BY_NAME[name] ?? 'ERR_INTERNAL';
  if (code === 'ERR_UNAVAILABLE') {
    return new AgentError(code, `${what}: etcd at ${endpoints.join(',')} is unreachable; check that it runs`, { cause: err });
  }
  return new AgentError(code, `${what}: ${message}`, { cause: err });
}
