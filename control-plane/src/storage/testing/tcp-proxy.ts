import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A byte-level TCP proxy on loopback for fault injection between a client and a server (TLS or
 * not: it never looks inside). Tests use it to lose exactly the reply of one request:
 *
 *   proxy.holdReplies();      // server → client bytes are kept back from now on
 *   const p = store.update(…) // the request reaches etcd and commits; its reply is held
 *   await <etcd shows the write>;
 *   proxy.cut();              // every connection is destroyed; held bytes are dropped
 *
 * and to lose a request on its way (`dropRequests()`).
 */
export interface TcpProxy {
  /** `127.0.0.1:<port>` the client dials. */
  readonly address: string;
  /** From now on, bytes from the server are held back instead of forwarded. */
  holdReplies(): void;
  /** From now on, bytes from the client are discarded instead of forwarded. */
  dropRequests(): void;
  /** Bytes discarded by {@link dropRequests} so far. */
  readonly droppedBytes: number;
  /** Destroys every open connection and drops held bytes; new connections are forwarded normally. */
  cut(): void;
  /** Stops listening and destroys every connection. Idempotent. */
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (an ephemeral port) forwarding to `target` (`host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const i = target.lastIndexOf(':');
  const host = target.slice(0, i);
  const port = Number(target.slice(i + 1));
  const sockets = new Set<Socket>();
  let hold = false;
  let drop = false;
  let dropped = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ host, port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined); // a cut connection errors on the other side; that is the point
    }
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('data', (d: Buffer) => {
      if (drop) dropped += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (!hold) client.write(d);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  if (typeof addr !== 'object' || !addr) throw new Error('proxy has no address');
  let closing: Promise<void> | undefined;
  const cut = (): void => {
    for (const s of sockets) s.destroy();
    hold = false;
    drop = false;
  };
  return {
    address: `127.0.0.1:${addr.port}`,
    holdReplies: () => void (hold = true),
    dropRequests: () => void (drop = true),
    get droppedBytes() {
      return dropped;
    },
    cut,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        cut();
      })),
  };
}
