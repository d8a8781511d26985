/**
 * Client side of the CRI streaming protocol for Exec / Attach over SPDY/3.1 (what kubectl falls
 * back to and what containerd 1.6 serves with stdin half-close; its WebSocket endpoint speaks v4,
 * which cannot close stdin).
 *
 * The RPC returns a one-shot URL (containerd: http://127.0.0.1:<port>/exec/<token>, valid 1 min).
 * We upgrade it (stream-upgrade.ts) offering {@link REMOTE_COMMAND_PROTOCOLS} and open one SPDY
 * stream per channel, each tagged `streamtype`, exactly as many as the Exec request asked for:
 *
 *   error   always, first         runtime → us: v4 a metav1.Status JSON, older versions plain text
 *   stdin   if stdin              us → runtime; our half-close (FIN) is the process's end of input
 *   stdout  if stdout             runtime → us
 *   stderr  if stderr and no tty  runtime → us
 *   resize  if tty (v3+)          us → runtime: a stream of {"Width":w,"Height":h} JSON objects
 *
 * The runtime writes the status, then closes the session; that is the end of the command.
 */
import type { Readable, Writable } from 'node:stream';
import { AgentError, abortError } from '@nodelet/base';
import type { AttachRequest, ExecRequest } from '@nodelet/proto';
import type { SpdyConnection, SpdyStream } from './spdy/index.js';
import { dialSpdy, type SpdyDialOptions } from './stream-upgrade.js';
import type { CriClient } from './types.js';

/** What we offer, newest first (kubelet's remotecommand versions that SPDY carries). */
export const REMOTE_COMMAND_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;
/** Status bytes kept from the error stream; a Status is a few hundred. */
const MAX_STATUS_BYTES = 64 * 1024;

export interface TerminalSize {
  width: number;
  height: number;
}

export interface RemoteCommandOptions extends SpdyDialOptions {
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  tty?: boolean;
  /** Protocols to offer; default {@link REMOTE_COMMAND_PROTOCOLS}. */
  protocols?: readonly string[];
}

/** An open exec/attach session: the raw SPDY streams, for callers that relay them (the agent). */
export interface RemoteCommand {
  readonly protocol: string;
  readonly conn: SpdyConnection;
  readonly error: SpdyStream;
  readonly stdin?: SpdyStream;
  readonly stdout?: SpdyStream;
  readonly stderr?: SpdyStream;
  readonly resize?: SpdyStream;
  /** The error stream's text once it ends or the session closes ('' when the runtime sent none). */
  readonly status: Promise<string>;
  /** Settles when the session's socket has closed. */
  readonly closed: Promise<void>;
}

/** Upgrades `url` and opens the streams; rejects (and closes the session) if any is refused. */
export async function openRemoteCommand(url: string, o: RemoteCommandOptions): Promise<RemoteCommand> {
  const { conn, protocol } = await dialSpdy(url, o.protocols ?? REMOTE_COMMAND_PROTOCOLS, o);
  const closed = new Promise<void>((resolve) => conn.once('close', () => resolve()));
  try {
    const open = (type: string, fin = false): Promise<SpdyStream> => conn.createStream({ streamtype: type }, { signal: o.signal, fin });
    // Issue every SYN_STREAM before awaiting: the runtime counts them within its creation timeout.
    const error = open('error');
    const stdin = o.stdin ? open('stdin') : undefined;
    const stdout = o.stdout ? open('stdout', true) : undefined;
    const stderr = o.stderr && !o.tty ? open('stderr', true) : undefined;
    const resize = o.tty && protocol !== 'v2.channel.k8s.io' && protocol !== 'channel.k8s.io' ? open('resize') : undefined;
    const settled = await Promise.allSettled([error, stdin, stdout, stderr, resize]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const [e, i, out, err, rs] = settled.map((r) => (r as PromiseFulfilledResult<SpdyStream | undefined>).value);
    for (const s of [e, i, out, err, rs]) s?.on('error', () => {}); // a reset ends that stream; the session's close is what we wait for
    return { protocol, conn, error: e!, stdin: i, stdout: out, stderr: err, resize: rs, status: readStatus(e!, closed), closed };
  } catch (err) {
    conn.destroy();
    throw err;
  }
}

function readStatus(s: SpdyStream, closed: Promise<void>): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    s.on('data', (c: Buffer) => {
      if (size + c.length <= MAX_STATUS_BYTES) chunks.push(c);
      size += c.length;
    });
    const finish = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
    s.once('end', finish);
    s.once('close', finish);
    void closed.then(finish);
  });
}

/** A resize message for the resize stream (and WebSocket channel 4): kubelet's TerminalSize JSON. */
export function resizeMessage(size: TerminalSize): Buffer {
  return Buffer.from(JSON.stringify({ Width: size.width, Height: size.height }));
}

interface K8sStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/** Exit code from the error stream; throws for failures that are not a plain non-zero exit. */
export function exitCodeFromStatus(raw: string, protocol: string): number {
  if (protocol !== 'v4.channel.k8s.io' && protocol !== 'v5.channel.k8s.io') {
    // Before v4 the error stream carries plain text: empty means success.
    if (raw.trim() === '') return 0;
    throw new AgentError('ERR_INTERNAL', `remote command failed: ${raw.trim()}`);
  }
  if (raw.trim() === '') return 0;
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

export interface StreamIo {
  /** Piped to the process; its end is the process's end of input. */
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** With a tty: the initial terminal size, sent as soon as the session opens. */
  size?: TerminalSize;
  /** Allocate a terminal (the Exec/Attach request must say so too). */
  tty?: boolean;
  signal?: AbortSignal;
}

export interface StreamResult {
  /** The remote process's exit code (0 when the runtime reported success). */
  exitCode: number;
  /** False when the session closed without a status (attach to an exiting container). */
  statusReceived: boolean;
}

export interface StreamSession {
  /** Sends a terminal resize (tty sessions). */
  resize(size: TerminalSize): void;
  /** Settles when the runtime closes the session. */
  readonly done: Promise<StreamResult>;
  /** Ends the session from our side. Idempotent. */
  close(): void;
}

/** The streams the Exec/Attach request asked for (the runtime waits for exactly these). */
export interface StreamFlags {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * Opens an exec/attach session at `url` and wires it to `io`. The streams opened are `flags`
 * (which must match the Exec/Attach request), by default those `io` has writers/readers for.
 * `done` settles with the exit code once the runtime closes the session; AbortError when
 * `io.signal` fires.
 */
export async function openStream(url: string, io: StreamIo = {}, flags?: StreamFlags): Promise<StreamSession> {
  const f = flags ?? { stdin: !!io.stdin, stdout: !!io.stdout, stderr: !!io.stderr, tty: io.tty ?? !!io.size };
  const rc = await openRemoteCommand(url, { ...f, signal: io.signal });
  if (rc.stdin) {
    if (io.stdin) io.stdin.pipe(rc.stdin);
    else rc.stdin.end();
  }
  // Output nobody wants is read and dropped: an unread stream would stall the whole session.
  if (rc.stdout) {
    if (io.stdout) rc.stdout.pipe(io.stdout, { end: false });
    else rc.stdout.resume();
  }
  if (rc.stderr) {
    if (io.stderr) rc.stderr.pipe(io.stderr, { end: false });
    else rc.stderr.resume();
  }
  const resize = (size: TerminalSize): void => void rc.resize?.write(resizeMessage(size));
  if (io.size) resize(io.size);
  const close = (): void => {
    if (io.stdin && rc.stdin) io.stdin.unpipe(rc.stdin);
    rc.conn.destroy();
  };
  const onAbort = (): void => close();
  io.signal?.addEventListener('abort', onAbort, { once: true });
  const done = (async (): Promise<StreamResult> => {
    await rc.closed;
    io.signal?.removeEventListener('abort', onAbort);
    if (io.stdin && rc.stdin) io.stdin.unpipe(rc.stdin);
    if (io.signal?.aborted) throw abortError(io.signal.reason);
    const raw = await rc.status;
    return { exitCode: exitCodeFromStatus(raw, rc.protocol), statusReceived: raw.trim() !== '' };
  })();
  done.catch(() => {}); // observed by the caller via session.done
  return { done, resize, close };
}

/** Exec RPC + openStream + wait: the whole of a non-interactive or interactive exec. */
export async function execStream(client: CriClient, request: ExecRequest, io: StreamIo = {}): Promise<StreamResult> {
  const { url } = await client.runtime.exec(request, { signal: io.signal });
  const session = await openStream(url, io, flagsOf(request));
  return session.done;
}

/** Attach RPC + openStream + wait. */
export async function attachStream(client: CriClient, request: AttachRequest, io: StreamIo = {}): Promise<StreamResult> {
  const { url } = await client.runtime.attach(request, { signal: io.signal });
  const session = await openStream(url, io, flagsOf(request));
  return session.done;
}

/** Stream flags of an Exec/Attach request (stderr never with a tty, as the runtime requires). */
export function flagsOf(r: { stdin?: boolean; stdout?: boolean; stderr?: boolean; tty?: boolean }): StreamFlags {
  return { stdin: !!r.stdin, stdout: !!r.stdout, stderr: !!r.stderr && !r.tty, tty: !!r.tty };
}
