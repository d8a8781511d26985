/**
 * createCriClient: RuntimeService and ImageService over one gRPC channel to a unix socket.
 *
 *   caller ──method(req, {signal, timeoutMs})──▶ #unary ──makeUnaryRequest──▶ runtime
 *                                                  │ deadline = now + timeout (per RPC, see methods.ts)
 *                                                  │ signal.abort → call.cancel() → AbortError
 *                                                  │ UNAVAILABLE + idempotent → wait for READY, resend
 *                                                  ▼ (≤ 1.5 s, never past the deadline)
 *                                     translateGrpcError (errors.ts): ERR_* with RPC and ID
 *
 * Reconnects are grpc-js's: when the runtime restarts, the channel drops to IDLE/TRANSIENT_FAILURE
 * and reconnects with backoff (capped at 1 s here: it is a local socket). A call made while the
 * channel is failing waits up to 1.5 s for it to reconnect, then fails with ERR_UNAVAILABLE, so a
 * runtime that is down is reported in seconds instead of hanging until the deadline, and one that
 * restarted is found again without the caller retrying.
 */
import { channel as diagnosticsChannel } from 'node:diagnostics_channel';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CRI_LOADER_OPTIONS, CRI_PROTO_PATH } from '@nodelet/proto';
import { abortError, errCode, isAbortError, noopLogger, type Logger } from '@nodelet/base';
import { parseEndpoint } from './endpoint.js';
import { isServiceError, translateGrpcError } from './errors.js';
import { IMAGE_METHODS, PULL_IMAGE_TIMEOUT_MS, RUNTIME_METHODS, subjectOf, type MethodInfo } from './methods.js';
import type { CallOptions, CriClient, ImageService, RuntimeService } from './types.js';

/**
 * diagnostics_channel on which every finished unary call is published as {@link CriCallEvent}
 * (for metrics such as kubelet's runtime_operations_duration_seconds), as undici does.
 */
export const CRI_CALL_CHANNEL = 'nodelet:cri:call';
export interface CriCallEvent {
  rpc: string;
  endpoint: string;
  durationMs: number;
  /** The nodelet error code, 'ABORTED' for cancellation, undefined on success. */
  error?: string;
}
const callChannel = diagnosticsChannel(CRI_CALL_CHANNEL);

/** kubelet's maxMsgSize. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * How long a call waits for the channel to (re)connect when the runtime was unreachable: longer
 * than the reconnect backoff cap below, so a runtime that restarted is found again.
 */
const RECONNECT_WAIT_MS = 1_500;
/** Resends of an idempotent call whose connection failed. */
const MAX_RESENDS = 2;

export interface CriClientOptions {
  /** `unix:///run/containerd/containerd.sock` (or a bare absolute socket path). */
  endpoint: string;
  /**
   * Base deadline of every call (default 2 min, kubelet's runtime request timeout). RunPodSandbox
   * gets twice this; PullImage gets `pullTimeoutMs`.
   */
  timeoutMs?: number;
  /** Deadline of PullImage (default 15 min). */
  pullTimeoutMs?: number;
  logger?: Logger;
}

/** The loaded api.proto (cached); also used by the fake server in ./testing. */
export function loadCriPackageDefinition(): protoLoader.PackageDefinition {
  return loadDefinition();
}

let packageDefinition: protoLoader.PackageDefinition | undefined;
function loadDefinition(): protoLoader.PackageDefinition {
  packageDefinition ??= protoLoader.loadSync(CRI_PROTO_PATH, { ...CRI_LOADER_OPTIONS });
  return packageDefinition;
}

function methodDefinition(info: MethodInfo): protoLoader.MethodDefinition<object, object> {
  const service = loadDefinition()[`runtime.v1.${info.service}`] as protoLoader.ServiceDefinition;
  const def = service[info.rpc];
  if (!def) throw new Error(`BUG: ${info.service}.${info.rpc} is missing from api.proto`);
  return def as protoLoader.MethodDefinition<object, object>;
}

/**
 * Creates a client. Does not connect: the first call does (and fails fast with ERR_UNAVAILABLE if
 * nothing listens). Use {@link connectCriClient} to also run the Version handshake.
 */
export function createCriClient(opts: CriClientOptions): CriClient {
  const endpoint = parseEndpoint(opts.endpoint);
  const log = (opts.logger ?? noopLogger).child({ component: 'cri-client' });
  const baseTimeout = opts.timeoutMs;
  const pullTimeout = opts.pullTimeoutMs ?? PULL_IMAGE_TIMEOUT_MS;
  const channel = new grpc.Client(endpoint.url, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1_000,
    'grpc.enable_http_proxy': 0,
    'grpc.enable_retries': 0, // retries are decided per method below, not by grpc-js
  });
  let closed = false;

  function timeoutFor(info: MethodInfo): number {
    if (info.rpc === 'PullImage') return pullTimeout;
    if (baseTimeout === undefined) return info.timeoutMs;
    return info.rpc === 'RunPodSandbox' ? 2 * baseTimeout : baseTimeout;
  }

  function once(info: MethodInfo, def: protoLoader.MethodDefinition<object, object>, request: object, deadline: number, signal?: AbortSignal): Promise<object> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal.reason));
      let onAbort: (() => void) | undefined;
      const call = channel.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        request,
        new grpc.Metadata(),
        { deadline },
        (err, value) => {
          if (onAbort) signal?.removeEventListener('abort', onAbort);
          if (signal?.aborted) return reject(abortError(signal.reason));
          if (err) return reject(err);
          resolve(value as object);
        },
      );
      if (signal) {
        onAbort = () => call.cancel();
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** Resolves true once the channel is READY, false at `until` or on abort; never rejects. */
  function waitReady(until: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted || until <= Date.now()) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      channel.waitForReady(until, (err) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(!err);
      });
    });
  }

  function inTransientFailure(): boolean {
    return channel.getChannel().getConnectivityState(false) === grpc.connectivityState.TRANSIENT_FAILURE;
  }

  async function unary(info: MethodInfo, request: object | undefined, options: CallOptions = {}): Promise<object> {
    if (!callChannel.hasSubscribers) return unaryCall(info, request, options);
    const start = performance.now();
    const publish = (error?: string): void =>
      callChannel.publish({ rpc: info.rpc, endpoint: endpoint.url, durationMs: performance.now() - start, error } satisfies CriCallEvent);
    try {
      const reply = await unaryCall(info, request, options);
      publish();
      return reply;
    } catch (err) {
      publish(isAbortError(err) ? 'ABORTED' : (errCode(err) ?? 'ERR_INTERNAL'));
      throw err;
    }
  }

  async function unaryCall(info: MethodInfo, request: object | undefined, options: CallOptions = {}): Promise<object> {
    const def = methodDefinition(info);
    const timeoutMs = options.timeoutMs ?? timeoutFor(info);
    const start = Date.now();
    const deadline = start + timeoutMs;
    const ctx = { rpc: info.rpc, endpoint: endpoint.url, subject: subjectOf(request), timeoutMs };
    if (closed) throw translateGrpcError(closedError(), ctx);
    // After a runtime restart the channel may still be waiting out its reconnect backoff; nothing
    // has been sent yet, so waiting here is safe for every RPC, including RunPodSandbox.
    if (inTransientFailure()) await waitReady(Math.min(deadline, Date.now() + RECONNECT_WAIT_MS), options.signal);
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw abortError(options.signal.reason);
      try {
        const reply = await once(info, def, request ?? {}, deadline, options.signal);
        log.debug({ rpc: info.rpc, ms: Date.now() - start, attempt }, 'CRI call done');
        return reply;
      } catch (err) {
        if (!isServiceError(err)) throw err;
        // Resend only what is idempotent: a lost reply to RunPodSandbox may still have created it.
        const resend = info.retryUnavailable && !closed && err.code === grpc.status.UNAVAILABLE && attempt < MAX_RESENDS;
        log.debug({ rpc: info.rpc, ms: Date.now() - start, attempt, grpcCode: grpc.status[err.code], resend }, 'CRI call failed');
        if (!resend || !(await waitReady(Math.min(deadline, Date.now() + RECONNECT_WAIT_MS), options.signal))) {
          if (options.signal?.aborted) throw abortError(options.signal.reason);
          throw translateGrpcError(err, ctx);
        }
      }
    }
  }

  async function* serverStream(info: MethodInfo, request: object | undefined, options: { signal?: AbortSignal } = {}): AsyncGenerator<object> {
    const def = methodDefinition(info);
    const ctx = { rpc: info.rpc, endpoint: endpoint.url, subject: undefined, timeoutMs: Infinity };
    const signal = options.signal;
    if (signal?.aborted) throw abortError(signal.reason);
    const call = channel.makeServerStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, request ?? {}, new grpc.Metadata(), {});
    const onAbort = (): void => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const item of call as AsyncIterable<object>) yield item;
    } catch (err) {
      if (signal?.aborted) throw abortError(signal.reason);
      if (isServiceError(err)) throw translateGrpcError(err, ctx);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      call.cancel(); // no-op when the stream already ended; stops it when the consumer breaks out
    }
  }

  const runtime = {} as Record<string, unknown>;
  for (const [name, info] of Object.entries(RUNTIME_METHODS)) {
    runtime[name] = info.streaming
      ? (req: object, o?: { signal?: AbortSignal }) => serverStream(info, req, o)
      : (req: object, o?: CallOptions) => unary(info, req, o);
  }
  const image = {} as Record<string, unknown>;
  for (const [name, info] of Object.entries(IMAGE_METHODS)) {
    image[name] = (req: object, o?: CallOptions) => unary(info, req, o);
  }

  return {
    runtime: runtime as unknown as RuntimeService,
    image: image as unknown as ImageService,
    endpoint: endpoint.url,
    close() {
      if (closed) return;
      closed = true;
      channel.close();
    },
  };
}

function closedError(): grpc.ServiceError {
  return Object.assign(new Error('the CRI client was closed'), {
    code: grpc.status.UNAVAILABLE,
    details: 'the CRI client was closed',
    metadata: new grpc.Metadata(),
  });
}
