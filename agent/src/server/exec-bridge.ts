/**
 * Bridges an exec/attach WebSocket from the API server's proxy (kubectl 1.32 negotiates
 * `v5.channel.k8s.io`) to the runtime's streaming server over SPDY, which containerd 1.6 serves
 * with stdin half-close (its WebSocket side stops at v4, which cannot close stdin):
 *
 *   kubectl ─WS v5─▶ API server ─splice─▶ node API ─(this)─SPDY v4─▶ containerd URL from CRI Exec/Attach
 *
 *   WebSocket frame [channel][payload]         SPDY stream
 *   0 stdin        client → runtime    ─▶      stdin   (write)
 *   255 [0]        close stdin (v5)    ─▶      stdin   half-close (FIN): the process reads EOF
 *   4 resize       client → runtime    ─▶      resize  (the same TerminalSize JSON)
 *   1 stdout / 2 stderr                ◀─      stdout / stderr
 *   3 status                           ◀─      error   (sent once it ended, after the last output)
 *
 * Older WebSocket versions (v4…channel.k8s.io) map to the same SPDY version, so the status
 * format (v4 JSON, earlier plain text) passes through as is.
 *
 * Backpressure both ways: stdin that the runtime's socket does not take pauses the client
 * WebSocket; output the client does not read (its send buffer past {@link HIGH_WATER_BYTES})
 * pauses the SPDY streams, which pause the runtime's socket. Nothing is buffered without bound.
 */
import type WebSocket from 'ws';
import type { Duplex, Readable } from 'node:stream';
import { describeError, type Logger } from '@nodelet/base';
import { openRemoteCommand, type RemoteCommand, type StreamFlags } from '@nodelet/cri-client';

/** What the node API accepts on a WebSocket exec/attach, preferred first. */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;
const CH_STDIN = 0;
const CH_STDOUT = 1;
const CH_STDERR = 2;
const CH_STATUS = 3;
const CH_RESIZE = 4;
const CH_CLOSE = 255;
/** Unsent bytes toward the client at which the runtime's output is paused. */
export const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;

/** The SPDY protocol to ask the runtime for, given what the client negotiated. */
export function spdyProtocolFor(wsProtocol: string): string {
  return wsProtocol === 'v5.channel.k8s.io' || wsProtocol === '' ? 'v4.channel.k8s.io' : wsProtocol;
}

export interface BridgeOptions {
  client: WebSocket;
  /**
   * The upgraded connection under `client`. Once our close frame is written its write side is
   * ended (as upstream's Go WebSocket servers close the connection with the close frame) instead
   * of waiting up to ws's 30 s close timeout for the peer's reply: a client that has not seen the
   * close frame yet, such as python-kubernetes 22.6 polling its socket while the last frames sit
   * in its TLS buffer, only wakes up when the connection ends.
   */
  socket: Duplex;
  /** The CRI Exec or Attach call; resolves to the runtime's streaming URL. */
  start: () => Promise<string>;
  flags: StreamFlags;
  log: Logger;
}

export async function bridgeRemoteCommand(o: BridgeOptions): Promise<void> {
  const { client } = o;
  // A malformed frame from the client is an 'error' event; without a listener it would be thrown.
  client.on('error', (err) => o.log.debug({ err: describeError(err) }, 'Exec client stream failed'));
  const v4Status = client.protocol === 'v5.channel.k8s.io' || client.protocol === 'v4.channel.k8s.io';
  const closeNormally = (): void => {
    client.close(1000);
    // ws wrote the close frame to the socket synchronously (no compression is negotiated here);
    // end() sends it before the FIN.
    o.socket.end();
  };
  const fail = (message: string): void => {
    if (client.readyState !== client.OPEN) return;
    const status = v4Status ? JSON.stringify({ metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 }) : message;
    client.resume(); // read the peer's close frame
    client.send(Buffer.concat([Buffer.of(CH_STATUS), Buffer.from(status)]));
    closeNormally();
  };
  // Until the runtime session is open, client frames wait here; past the high-water mark the
  // client is paused until it opens.
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const link: { rc?: RemoteCommand; clientGone: boolean } = { clientGone: false };
  const onFrame = (frame: Buffer): void => {
    const rc = link.rc!;
    const payload = frame.subarray(1);
    switch (frame[0]) {
      case CH_STDIN:
        if (rc.stdin && !rc.stdin.writableEnded && payload.length && !rc.stdin.write(payload)) {
          client.pause();
          rc.stdin.once('drain', () => client.resume());
        }
        return;
      case CH_RESIZE:
        rc.resize?.write(payload);
        return;
      case CH_CLOSE:
        if (payload[0] === CH_STDIN) rc.stdin?.end();
        return;
    }
  };
  client.on('message', (data: Buffer) => {
    const frame = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (frame.length === 0) return;
    if (link.rc) return onFrame(frame);
    early.push(frame);
    earlyBytes += frame.length;
    if (earlyBytes > HIGH_WATER_BYTES) client.pause();
  });
  const ac = new AbortController();
  const outputs: Readable[] = [];
  client.on('close', () => {
    link.clientGone = true;
    ac.abort();
    link.rc?.conn.destroy();
    for (const x of outputs) x.resume(); // let paused output reach its end
  });
  let rc: RemoteCommand;
  try {
    const url = await o.start();
    rc = await openRemoteCommand(url, { ...o.flags, protocols: [spdyProtocolFor(client.protocol)], signal: ac.signal });
  } catch (err) {
    if (!link.clientGone) fail(describeError(err));
    return;
  }
  if (link.clientGone) return rc.conn.destroy();
  link.rc = rc;
  for (const f of early.splice(0)) onFrame(f);
  if (client.isPaused && rc.stdin?.writableNeedDrain !== true) client.resume();
  const relayOutput = (s: Readable | undefined, channel: number): void => {
    if (!s) return;
    outputs.push(s);
    s.on('data', (chunk: Buffer) => {
      if (client.readyState !== client.OPEN) return;
      client.send(Buffer.concat([Buffer.of(channel), chunk]), () => {
        if (client.bufferedAmount < LOW_WATER_BYTES) for (const x of outputs) x.resume();
      });
      if (client.bufferedAmount > HIGH_WATER_BYTES) for (const x of outputs) x.pause();
    });
  };
  relayOutput(rc.stdout, CH_STDOUT);
  relayOutput(rc.stderr, CH_STDERR);
  // 1. All output delivered, 2. the status, 3. a normal close (kubectl reads the exit code from 2).
  await Promise.all(outputs.map((s) => new Promise<void>((resolve) => (s.readableEnded || s.destroyed ? resolve() : (s.once('end', resolve), s.once('close', resolve))))));
  const status = await rc.status;
  rc.conn.destroy();
  if (client.readyState !== client.OPEN) return;
  if (status) client.send(Buffer.concat([Buffer.of(CH_STATUS), Buffer.from(status)]));
  closeNormally();
}
