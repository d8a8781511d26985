/**
 * The client side of the gRPC health-checking protocol (`grpc.health.v1.Health/Check`), for the
 * agent's gRPC probes (kubelet pkg/probe/grpc). It lives here because `@grpc/grpc-js` is this
 * package's. The two messages are tiny (one string field, one enum field), so they are encoded by
 * hand instead of loading a .proto file:
 *
 *   HealthCheckRequest  { string service = 1; }            → 0x0a <len> <utf8>
 *   HealthCheckResponse { ServingStatus status = 1; }      ← 0x08 <varint>
 *
 * Every outcome is a {@link GrpcHealthResult}; the call never throws for an unreachable or
 * misbehaving server. Only the caller's `signal` rejects (AbortError), as for the other probes.
 */
import * as grpc from '@grpc/grpc-js';
import { abortError } from '@nodelet/base';

/** grpc.health.v1.HealthCheckResponse.ServingStatus by number. */
export const GRPC_SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

export interface GrpcHealthResult {
  healthy: boolean;
  /** kubelet's probe output: "service healthy", "service unhealthy (responded with …)", or why the call failed. */
  output: string;
}

export interface GrpcHealthCheckOptions {
  host: string;
  port: number;
  /** The `service` field of the request; '' asks about the server as a whole. */
  service?: string;
  timeoutMs: number;
  /** Sent as the user agent, as kubelet sends `kube-probe/<major>.<minor>`. */
  userAgent?: string;
  signal?: AbortSignal;
}

/** Encodes HealthCheckRequest. */
export function encodeHealthCheckRequest(service: string): Buffer {
  const s = Buffer.from(service, 'utf8');
  return s.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a]), varint(s.length), s]);
}

/** Decodes HealthCheckResponse to its status number (0 when absent, as proto3 defaults); unknown fields are skipped. */
export function decodeHealthCheckResponse(b: Buffer): number {
  let status = 0;
  let i = 0;
  const readVarint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (i >= b.length) throw new Error('truncated HealthCheckResponse');
      const byte = b[i++]!;
      v += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7;
      if (shift > 63) throw new Error('malformed varint in HealthCheckResponse');
    }
  };
  while (i < b.length) {
    const key = readVarint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      const v = readVarint();
      if (field === 1) status = v;
    } else if (wire === 2) i += readVarint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unsupported wire type ${wire} in HealthCheckResponse`);
  }
  return status;
}

/** Encodes HealthCheckResponse (for test servers). */
export function encodeHealthCheckResponse(status: number): Buffer {
  return status === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x08]), varint(status)]);
}

/** Decodes HealthCheckRequest's service (for test servers). */
export function decodeHealthCheckRequest(b: Buffer): string {
  if (b.length === 0) return '';
  if (b[0] !== 0x0a) throw new Error('unexpected field in HealthCheckRequest');
  let len = 0;
  let shift = 0;
  let i = 1;
  for (;;) {
    const byte = b[i++]!;
    len += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
    shift += 7;
  }
  return b.subarray(i, i + len).toString('utf8');
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** The method path of the health check, for clients and test servers. */
export const HEALTH_CHECK_METHOD = '/grpc.health.v1.Health/Check';

/** Go's time.Duration formatting of whole or fractional seconds, as kubelet prints timeouts ("1s", "1.5s"). */
function goSeconds(ms: number): string {
  return `${ms / 1000}s`;
}

/** grpc-go's spelling of a status code (`Unavailable`, `DeadlineExceeded`), which kubelet's messages carry. */
function goCodeName(code: grpc.status): string {
  const name = grpc.status[code];
  if (!name) return `Code(${code})`;
  return name.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _u: string, c: string) => c.toUpperCase());
}

/**
 * One health check over a fresh plaintext connection (kubelet dials per probe too, without TLS).
 * `timeoutMs` bounds connecting and the call together.
 */
export async function checkGrpcHealth(o: GrpcHealthCheckOptions): Promise<GrpcHealthResult> {
  if (o.signal?.aborted) throw abortError(o.signal.reason);
  const addr = o.host.includes(':') ? `[${o.host}]:${o.port}` : `${o.host}:${o.port}`;
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': o.userAgent ?? 'kube-probe',
    // One probe, one connection: no retries that would outlast the timeout's meaning.
    'grpc.enable_retries': 0,
    'grpc.max_reconnect_backoff_ms': o.timeoutMs,
  });
  try {
    return await new Promise<GrpcHealthResult>((resolve, reject) => {
      const call = client.makeUnaryRequest<string, number>(
        HEALTH_CHECK_METHOD,
        encodeHealthCheckRequest,
        decodeHealthCheckResponse,
        o.service ?? '',
        new grpc.Metadata(),
        // Not wait-for-ready: a refused connection fails at once with UNAVAILABLE, as kubelet's does.
        { deadline: Date.now() + o.timeoutMs },
        (err, status) => {
          o.signal?.removeEventListener('abort', onAbort);
          if (o.signal?.aborted) return reject(abortError(o.signal.reason));
          if (err) return resolve({ healthy: false, output: describeCallError(err, o.timeoutMs) });
          const name = GRPC_SERVING_STATUS[status ?? 0] ?? String(status);
          if (name === 'SERVING') resolve({ healthy: true, output: 'service healthy' });
          else resolve({ healthy: false, output: `service unhealthy (responded with "${name}")` });
        },
      );
      const onAbort = (): void => call.cancel();
      o.signal?.addEventListener('abort', onAbort, { once: true });
    });
  } finally {
    client.close();
  }
}

function describeCallError(err: grpc.ServiceError, timeoutMs: number): string {
  switch (err.code) {
    case grpc.status.UNIMPLEMENTED:
      return `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`;
    case grpc.status.DEADLINE_EXCEEDED:
      return `timeout: health rpc did not complete within ${goSeconds(timeoutMs)}`;
    default:
      return `error: health rpc probe failed: rpc error: code = ${goCodeName(err.code)} desc = ${err.details}`;
  }
}
