/**
 * gRPC status → nodelet error codes. This is the only place where CRI failures are classified;
 * everything above cri-client matches on `hasCode(err, 'ERR_…')`.
 */
import { AgentError, type ErrorCode } from '@nodelet/base';
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

const BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  [GrpcStatus.CANCELLED]: 'ERR_UNAVAILABLE', // cancelled by the server (e.g. while it shuts down); ours become AbortError
  [GrpcStatus.UNKNOWN]: 'ERR_INTERNAL', // containerd returns UNKNOWN for errors it did not classify
  [GrpcStatus.INVALID_ARGUMENT]: 'ERR_INVALID_ARGUMENT',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'ERR_DEADLINE_EXCEEDED',
  [GrpcStatus.NOT_FOUND]: 'ERR_NOT_FOUND',
  [GrpcStatus.ALREADY_EXISTS]: 'ERR_ALREADY_EXISTS',
  [GrpcStatus.PERMISSION_DENIED]: 'ERR_PERMISSION_DENIED',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'ERR_RESOURCE_EXHAUSTED',
  [GrpcStatus.FAILED_PRECONDITION]: 'ERR_FAILED_PRECONDITION',
  [GrpcStatus.ABORTED]: 'ERR_CONFLICT',
  [GrpcStatus.OUT_OF_RANGE]: 'ERR_INVALID_ARGUMENT',
  [GrpcStatus.UNIMPLEMENTED]: 'ERR_UNIMPLEMENTED',
  [GrpcStatus.INTERNAL]: 'ERR_INTERNAL',
  [GrpcStatus.UNAVAILABLE]: 'ERR_UNAVAILABLE',
  [GrpcStatus.DATA_LOSS]: 'ERR_INTERNAL',
  [GrpcStatus.UNAUTHENTICATED]: 'ERR_UNAUTHENTICATED',
};

/** The nodelet error code of a gRPC status (UNKNOWN and unlisted ones are ERR_INTERNAL). */
export function errorCodeOfStatus(status: number): ErrorCode {
  return BY_STATUS[status] ?? 'ERR_INTERNAL';
}

/** An AgentError that also carries the RPC and the gRPC status name, for diagnostics. */
export class CriError extends AgentError {
  /** e.g. `ContainerStatus` */
  readonly rpc: string;
  /** e.g. `NOT_FOUND` */
  readonly grpcStatus: string;

  constructor(code: ErrorCode, message: string, details: { rpc: string; grpcStatus: string; cause?: unknown }) {
    super(code, message, { cause: details.cause });
    this.name = 'CriError';
    this.rpc = details.rpc;
    this.grpcStatus = details.grpcStatus;
  }
}

export interface CallContext {
  rpc: string;
  endpoint: string;
  /** What the request is about, e.g. `container "abc"` (see subjectOf). */
  subject?: string;
  timeoutMs: number;
}

export function isServiceError(err: unknown): err is ServiceError {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' && 'details' in err;
}

/** The hint appended to "not reachable" messages: what the operator should check. */
export function runtimeHint(endpoint: string): string {
  if (endpoint.includes('crio')) return 'is CRI-O running?';
  if (endpoint.includes('containerd')) return 'is containerd running?';
  return 'is the container runtime (containerd) running and listening there?';
}

/** Translates a gRPC failure of one call into a CriError with a message naming the RPC and the ID. */
export function translateGrpcError(err: ServiceError, ctx: CallContext): CriError {
  const code = errorCodeOfStatus(err.code);
  const grpcStatus = GrpcStatus[err.code] ?? String(err.code);
  const details = cleanDetails(err.details || err.message);
  const about = ctx.subject ? ` for ${ctx.subject}` : '';
  let message: string;
  if (err.code === GrpcStatus.UNAVAILABLE) {
    message = `container runtime at ${ctx.endpoint} is not reachable: ${details}; ${runtimeHint(ctx.endpoint)}`;
  } else if (err.code === GrpcStatus.DEADLINE_EXCEEDED) {
    message = `cri ${ctx.rpc}${about} did not finish within ${formatMs(ctx.timeoutMs)} (deadline exceeded): ${details}`;
  } else if (err.code === GrpcStatus.UNIMPLEMENTED) {
    message = `cri ${ctx.rpc} is not implemented by the runtime at ${ctx.endpoint}: ${details}`;
  } else {
    message = `cri ${ctx.rpc}${about} failed: ${details}`;
  }
  return new CriError(code, message, { rpc: ctx.rpc, grpcStatus, cause: err });
}

/** grpc-js connection errors end in an empty "Resolution note:" and repeat "Error: "; trim both. */
function cleanDetails(details: string): string {
  return details
    .replace(/\s*Resolution note:\s*$/, '')
    .replace(/Last error: Error: /, 'Last error: ')
    .trim()
    .replace(/\.$/, '');
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
