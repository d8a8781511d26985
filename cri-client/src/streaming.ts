/**
 * Client side of the CRI streaming protocol for Exec / Attach / PortForward.
 *
 * The RPC returns a one-shot URL (containerd: http://127.0.0.1:<port>/exec/<token>, valid 1 min).
 * We speak WebSocket to it with subprotocol `v4.channel.k8s.io` (containerd 1.6 refuses v5 with
 * 403). Every binary frame starts with a channel byte:
 *
 *   0 stdin (us → runtime)   1 stdout   2 stderr   3 status (v4: a metav1.Status JSON)   4 resize (us → runtime)
 *
 * v4 has no "close stdin" frame (v5 adds channel 255), so a non-tty `exec -i` whose command waits
 * for EOF on stdin only ends when the caller closes the session.
 */
import WebSocket from 'ws';
import type { Readable, Writable, Duplex } from 'node:stream';
import { AgentError, abortError } from '@nodelet/base';
import type { AttachRequest, ExecRequest, PortForwardRequest } from '@nodelet/proto';
import type { CriClient } from './types.js';

export const STREAM_PROTOCOLS = ['v4.channel.k8s.io', 'channel.k8s.io'] as const;

const CH_STDIN = 0;
const CH_STDOUT = 1;
const CH_STDERR = 2;
const CH_STATUS = 3;
const CH_RESIZE = 4;

export interface TerminalSize {
  width: number;
  height: number;
}

export interface StreamIo {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** Initial terminal size, sent as soon as the stream opens (tty sessions). */
  size?: TerminalSize;
  signal?: AbortSignal;
}

export interface StreamResult {
  /** The remote process's exit code (0 when the runtime reported success). */
  exitCode: number;
  /** False when the connection closed without a status frame (attach to an exiting container). */
  statusReceived: boolean;
}

export interface StreamSession {
  /** Sends a terminal resize (tty sessions). */
  resize(size: TerminalSize): void;
  /** Settles when the runtime closes the stream. */
  readonly done: Promise<StreamResult>;
  /** Ends the session from our side. Idempotent. */
  close(): void;
}

/** The runtime may return a path only; crictl completes it against the kubelet's address. */
export function toWebSocketUrl(url: string): string {
  const full = /^[a-z]+:\/\//i.test(url) ? url : `http://127.0.0.1:10250${url.startsWith('/') ? '' : '/'}${url}`;
  return full.replace(/^http:/i, 'ws:').replace(/^https:/i, 'wss:');
}

interface K8sStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/** Exit code from a v4 status frame; throws for failures that are not a plain non-zero exit. */
export function exitCodeFromStatus(raw: string, protocol: string): number {
  if (protocol !== 'v4.channel.k8s.io') {
    // channel.k8s.io carries plain text: empty means success.
    if (raw.trim() === '') return 0;
    throw new AgentError('ERR_INTERNAL', `remote command failed: ${raw.trim()}`);
  }
  let st: K8sStatus;
  try {
    st = JSON.parse(raw) as K8sStatus;
  } catch {
    throw new AgentError('ERR_INTERNAL', `remote command failed: ${raw.trim()}`);
  }
  if (st.status === 'Success') return 0;
  if (st.reason === 'NonZeroExitCode') {
    const cause = st.details?.causes?.find((c) => c.reason === 'ExitCode');
    const code = Number.parseInt(cause?.message ?? '', 10);
    if (Number.isInteger(code)) return code;
  }
  throw new AgentError('ERR_INTERNAL', `remote command failed: ${st.message ?? raw.trim()}`);
}

/**
 * Opens an exec/attach stream at `url` and wires it to `io`. Resolves once the WebSocket is open;
 * `session.done` settles with the exit code. Rejects with AbortError when `io.signal` fires.
 */
export function openStream(url: string, io: StreamIo = {}): Promise<StreamSession> {
  const signal = io.signal;
  if (signal?.aborted) return Promise.reject(abortError(signal.reason));
  const ws = new WebSocket(toWebSocketUrl(url), [...STREAM_PROTOCOLS], { handshakeTimeout: 30_000, perMessageDeflate: false });
  let status: string | undefined;
  let settle!: { resolve: (r: StreamResult) => void; reject: (e: unknown) => void };
  const done = new Promise<StreamResult>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => {}); // observed by the caller via session.done; avoid unhandled rejections before it is read

  const send = (channel: number, data: Buffer): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(Buffer.concat([Buffer.of(channel), data]));
  };
  const onStdin = (chunk: Buffer | string): void => send(CH_STDIN, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  let rejectOpen: ((err: unknown) => void) | undefined;
  const onAbort = (): void => {
    const err = abortError(signal?.reason);
    rejectOpen?.(err); // before 'open' the caller is still waiting for the session
    settle.reject(err);
    ws.terminate();
  };
  const cleanup = (): void => {
    io.stdin?.off('data', onStdin);
    signal?.removeEventListener('abort', onAbort);
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const payload = data.subarray(1);
    switch (data[0]) {
      case CH_STDOUT:
        if (payload.length) io.stdout?.write(payload);
        break;
      case CH_STDERR:
        if (payload.length) io.stderr?.write(payload);
        break;
      case CH_STATUS:
        status = (status ?? '') + payload.toString('utf8');
        break;
    }
  });
  ws.on('close', () => {
    cleanup();
    if (status === undefined) return settle.resolve({ exitCode: 0, statusReceived: false });
    try {
      settle.resolve({ exitCode: exitCodeFromStatus(status, ws.protocol), statusReceived: true });
    } catch (err) {
      settle.reject(err);
    }
  });

  return new Promise<StreamSession>((resolve, reject) => {
    rejectOpen = reject;
    ws.once('unexpected-response', (_req, res) => {
      cleanup();
      const err = new AgentError(
        res.statusCode === 404 ? 'ERR_NOT_FOUND' : 'ERR_UNAVAILABLE',
        `streaming server refused ${url}: HTTP ${res.statusCode}${res.statusCode === 404 ? ' (the one-time URL expired or was used already)' : ''}`,
      );
      res.resume();
      ws.terminate();
      settle.reject(err);
      reject(err);
    });
    ws.once('error', (err) => {
      cleanup();
      const e = new AgentError('ERR_UNAVAILABLE', `cannot open stream ${url}: ${err.message}`, { cause: err });
      settle.reject(e);
      reject(e);
    });
    ws.once('open', () => {
      rejectOpen = undefined;
      ws.removeAllListeners('error');
      ws.on('error', (err) => settle.reject(new AgentError('ERR_UNAVAILABLE', `stream ${url} failed: ${err.message}`, { cause: err })));
      if (io.size) send(CH_RESIZE, Buffer.from(JSON.stringify({ Width: io.size.width, Height: io.size.height })));
      io.stdin?.on('data', onStdin);
      resolve({
        done,
        resize: (size) => send(CH_RESIZE, Buffer.from(JSON.stringify({ Width: size.width, Height: size.height }))),
        close: () => {
          cleanup();
          if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
        },
      });
    });
  });
}

/** Exec RPC + openStream + wait: the whole of a non-interactive or interactive exec. */
export async function execStream(client: CriClient, request: ExecRequest, io: StreamIo = {}): Promise<StreamResult> {
  const { url } = await client.runtime.exec(request, { signal: io.signal });
  const session = await openStream(url, io);
  return session.done;
}

/** Attach RPC + openStream + wait. */
export async function attachStream(client: CriClient, request: AttachRequest, io: StreamIo = {}): Promise<StreamResult> {
  const { url } = await client.runtime.attach(request, { signal: io.signal });
  const session = await openStream(url, io);
  return session.done;
}

/**
 * Forwards one connection to `port` of a sandbox: PortForward RPC (a fresh one-time URL per
 * connection), then WebSocket with `?port=`; channel 0 carries data, channel 1 errors, and the
 * runtime starts each channel with the port number (2 bytes, little-endian), which we skip.
 */
export async function portForwardStream(
  client: CriClient,
  request: Pick<PortForwardRequest, 'podSandboxId'> & { port: number },
  conn: Duplex,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const { url } = await client.runtime.portForward({ podSandboxId: request.podSandboxId, port: [request.port] }, { signal: opts.signal });
  const target = new URL(toWebSocketUrl(url));
  target.searchParams.append('port', String(request.port));
  const ws = new WebSocket(target, ['v4.channel.k8s.io'], { handshakeTimeout: 30_000, perMessageDeflate: false });
  const skip = new Map<number, number>([
    [0, 2],
    [1, 2],
  ]);
  let errorText = '';
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      ws.terminate();
      conn.destroy();
      reject(abortError(opts.signal?.reason));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      reject(new AgentError('ERR_UNAVAILABLE', `port-forward to ${request.port} refused: HTTP ${res.statusCode}`));
    });
    ws.on('error', (err) => reject(new AgentError('ERR_UNAVAILABLE', `port-forward to ${request.port} failed: ${err.message}`, { cause: err })));
    ws.on('open', () => {
      conn.on('data', (chunk: Buffer) => ws.send(Buffer.concat([Buffer.of(0), chunk])));
      conn.on('end', () => ws.close());
      conn.on('error', () => ws.close());
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary || data.length === 0) return;
      const ch = data[0] as number;
      let payload = data.subarray(1);
      const toSkip = skip.get(ch) ?? 0;
      if (toSkip > 0) {
        const n = Math.min(toSkip, payload.length);
        skip.set(ch, toSkip - n);
        payload = payload.subarray(n);
      }
      if (!payload.length) return;
      if (ch === 0) conn.write(payload);
      else if (ch === 1) errorText += payload.toString('utf8');
    });
    ws.on('close', () => {
      opts.signal?.removeEventListener('abort', onAbort);
      conn.end();
      if (errorText) reject(new AgentError('ERR_INTERNAL', `port-forward to ${request.port}: ${errorText.trim()}`));
      else resolve();
    });
  });
}
