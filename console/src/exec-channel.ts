/**
 * The client side of a WebSocket exec (kube-apiserver's channel protocols, as kubectl's and
 * client-go's WebSocket executor speak them): each binary message is one frame, its first byte the
 * stream — 0 stdin, 1 stdout, 2 stderr, 3 error (the final Status as JSON), 4 resize
 * (`{"Width":…,"Height":…}`) — and, in v5.channel.k8s.io only, 255 to close a stream (the byte
 * after it names which). Kept apart from the DOM so it can be tested against a loopback server.
 */

/** The subprotocols offered, newest first; the token protocol is added by the caller (api.ts). */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

/** Streams of the channel protocol. */
export const Channel = { Stdin: 0, Stdout: 1, Stderr: 2, Error: 3, Resize: 4, Close: 255 } as const;

/** The subprotocol that carries a bearer token (kube-apiserver reads and removes it). */
export function bearerProtocol(token: string): string {
  const bytes = new TextEncoder().encode(token);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return `base64url.bearer.authorization.k8s.io.${btoa(bin).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/** The exec path for an interactive shell in `container` of pod `namespace/pod`. */
export function execPath(namespace: string, pod: string, container: string, command: readonly string[] = ['sh']): string {
  const q = new URLSearchParams();
  q.set('container', container);
  for (const c of command) q.append('command', c);
  for (const k of ['stdin', 'stdout', 'tty']) q.set(k, 'true');
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/exec?${q.toString()}`;
}

/** The part of the browser's WebSocket this uses (the `ws` package's client has it too). */
export interface SocketLike {
  binaryType: string;
  readonly protocol: string;
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: ArrayBufferView | ArrayBuffer): void;
  close(code?: number): void;
}

/** What a session reports. */
export interface ExecEvents {
  /** Bytes from stdout or stderr (a tty merges them into stdout). */
  output(data: Uint8Array): void;
  /** The session ended: `message` is the server's (the error channel's Status, or the close reason). */
  exit(result: { success: boolean; message: string }): void;
}

/** One exec stream over an open or opening socket. */
export class ExecSession {
  #exited = false;
  #errorStatus: { status?: string; message?: string } | undefined;
  readonly #pending: Uint8Array[] = [];

  constructor(
    private readonly socket: SocketLike,
    private readonly events: ExecEvents,
  ) {
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => {
      for (const f of this.#pending.splice(0)) socket.send(f);
    };
    socket.onmessage = (ev) => this.#frame(ev.data);
    socket.onerror = () => undefined; // the close event that follows reports it
    socket.onclose = (ev) => {
      const s = this.#errorStatus;
      if (s) this.#exit(s.status === 'Success', s.message ?? (s.status === 'Success' ? 'exited' : 'failed'));
      else this.#exit(ev.code === 1000, ev.reason || (ev.code === 1000 ? 'closed' : `connection closed (${ev.code})`));
    };
  }

  /** The negotiated protocol version ('' until open). */
  get protocol(): string {
    return this.socket.protocol;
  }

  /** Sends keystrokes (UTF-8) to stdin. */
  input(data: string | Uint8Array): void {
    this.#send(Channel.Stdin, typeof data === 'string' ? new TextEncoder().encode(data) : data);
  }

  /** Tells the tty its size in cells. */
  resize(cols: number, rows: number): void {
    if (cols > 0 && rows > 0) this.#send(Channel.Resize, new TextEncoder().encode(JSON.stringify({ Width: cols, Height: rows })));
  }

  /** Closes stdin (v5 only: v4 has no way but closing the socket). */
  closeStdin(): void {
    if (this.socket.protocol === 'v5.channel.k8s.io') this.#raw(Uint8Array.of(Channel.Close, Channel.Stdin));
  }

  /** Ends the session from this side. */
  close(): void {
    this.socket.close(1000);
  }

  #send(channel: number, payload: Uint8Array): void {
    const f = new Uint8Array(payload.length + 1);
    f[0] = channel;
    f.set(payload, 1);
    this.#raw(f);
  }

  #raw(frame: Uint8Array): void {
    if (this.#exited || this.socket.readyState > 1) return;
    if (this.socket.readyState === 0) this.#pending.push(frame);
    else this.socket.send(frame);
  }

  #frame(data: unknown): void {
    if (!(data instanceof ArrayBuffer) || data.byteLength === 0) return;
    const bytes = new Uint8Array(data);
    const body = bytes.subarray(1);
    switch (bytes[0]) {
      case Channel.Stdout:
      case Channel.Stderr:
        if (body.length) this.events.output(body);
        break;
      case Channel.Error:
        try {
          this.#errorStatus = JSON.parse(new TextDecoder().decode(body)) as { status?: string; message?: string };
        } catch {
          this.#errorStatus = { status: 'Failure', message: new TextDecoder().decode(body) };
        }
        break;
      default:
        break; // stdin echoes, a close of a server stream: nothing to show
    }
  }

  #exit(success: boolean, message: string): void {
    if (this.#exited) return;
    this.#exited = true;
    this.events.exit({ success, message });
  }
}
