/**
 * Failures of the fake runtime: CriErrors carrying the gRPC status containerd would answer with, so
 * the in-process caller (the hollow node) sees the same ERR_* code as a client of the gRPC fake does.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { CriError, errorCodeOfStatus } from '../errors.js';

/** A gRPC status by name, e.g. `NOT_FOUND`. */
export type GrpcStatusName = keyof typeof GrpcStatus;

/** The failure of `rpc` containerd answers with `status` and `details`. */
export function fakeRuntimeError(rpc: string, status: GrpcStatusName, details: string): CriError {
  return new CriError(errorCodeOfStatus(GrpcStatus[status]), details, { rpc, grpcStatus: status });
}

/** The numeric gRPC status of a fake runtime failure (what the gRPC fake sends). */
export function grpcStatusOf(err: CriError): number {
  return GrpcStatus[err.grpcStatus as GrpcStatusName] ?? GrpcStatus.UNKNOWN;
}

/**
 * A lookup by full ID or unique prefix (containerd's truncindex); undefined when absent. An
 * ambiguous prefix is UNKNOWN: containerd's stores return truncindex's error unclassified.
 */
export function byIdOrPrefix<T>(map: Map<string, T>, key: string | undefined, kind: string, rpc: string): T | undefined {
  if (!key) return undefined;
  const exact = map.get(key);
  if (exact) return exact;
  let hit: string | undefined;
  for (const k of map.keys()) {
    if (!k.startsWith(key)) continue;
    if (hit !== undefined) throw fakeRuntimeError(rpc, 'UNKNOWN', `an error occurred when try to find ${kind} "${key}": multiple IDs found with provided prefix: ${key}`);
    hit = k;
  }
  return hit === undefined ? undefined : map.get(hit);
}
