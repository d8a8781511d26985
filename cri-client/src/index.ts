/**
 * @nodelet/cri-client: CRI v1 RuntimeService/ImageService over a unix socket, the streaming client
 * for exec/attach/port-forward (SPDY/3.1), the CRI log file reader, and verbose-status helpers.
 *
 *   const cri = createCriClient({ endpoint: 'unix:///run/containerd/containerd.sock' });
 *   await handshake(cri);                                   // Version("0.1.0")
 *   const { podSandboxId } = await cri.runtime.runPodSandbox({ config }, { signal });
 *
 * Errors are AgentErrors (CriError) classified by code: ERR_NOT_FOUND, ERR_UNAVAILABLE,
 * ERR_DEADLINE_EXCEEDED, ERR_UNIMPLEMENTED, …; cancellation via `signal` rejects with AbortError.
 */
export { createCriClient, CRI_CALL_CHANNEL, MAX_MESSAGE_BYTES, type CriCallEvent, type CriClientOptions } from './client.js';
export type { CallOptions, CriClient, ImageService, RuntimeService } from './types.js';
export { CRI_API_VERSION, connectCriClient, handshake, type ConnectOptions } from './handshake.js';
export { CriError, translateGrpcError, type CallContext } from './errors.js';
export { parseEndpoint, type CriEndpoint } from './endpoint.js';
export { DEFAULT_TIMEOUT_MS, PULL_IMAGE_TIMEOUT_MS, RUN_POD_SANDBOX_TIMEOUT_MS } from './methods.js';
export { netnsPathFromSandboxInfo } from './netns.js';
export {
  attachStream,
  execStream,
  exitCodeFromStatus,
  flagsOf,
  openRemoteCommand,
  openStream,
  REMOTE_COMMAND_PROTOCOLS,
  resizeMessage,
  type RemoteCommand,
  type RemoteCommandOptions,
  type StreamFlags,
  type StreamIo,
  type StreamResult,
  type StreamSession,
  type TerminalSize,
} from './streaming.js';
export { PORT_FORWARD_PROTOCOL, PortForwardSession, portForwardStream } from './port-forward.js';
export { completeStreamUrl, dialSpdy, HANDSHAKE_TIMEOUT_MS, type SpdyDialOptions, type SpdySession } from './stream-upgrade.js';
export * as spdy from './spdy/index.js';
export { SpdyConnection, SpdyStream } from './spdy/index.js';
export {
  followCriLog,
  formatCriLogEntry,
  parseCriLogLine,
  readCriLog,
  type CriLogEntry,
  type CriLogRecord,
  type CriLogStream,
  type FollowCriLogOptions,
  type ReadCriLogOptions,
} from './logs.js';
// The generated CRI message types, so that packages which may not import @nodelet/proto (agent, cli) can name them.
export * from '@nodelet/proto';
export {
  checkGrpcHealth,
  decodeHealthCheckRequest,
  encodeHealthCheckResponse,
  GRPC_SERVING_STATUS,
  HEALTH_CHECK_METHOD,
  type GrpcHealthCheckOptions,
  type GrpcHealthResult,
} from './grpc-health.js';
