/**
 * The HTTP client of the server → agent proxy for plain requests (pods/log): one undici `Agent`
 * per API server, keeping connections to each node's agent alive between requests.
 *
 * Every new connection is dialled by `connect` below with the TLS material read at that moment
 * (`tlsFor`), so a rotated proxy client certificate or agent CA applies to the next connection
 * without rebuilding the pool — the same rule `dialAgent` follows for stream upgrades. The pool
 * is destroyed when the server shuts down (`shutdown`), so no idle socket keeps a process alive.
 */
import tls from 'node:tls';
import { isIP } from 'node:net';
import { Agent, type buildConnector } from 'undici';

/** Idle keep-alive sockets to an agent are closed after this long (kubelet's own server idles out at 2 min). */
const KEEP_ALIVE_MS = 30_000;

const pools = new WeakMap<AbortSignal, Agent>();

/**
 * The dispatcher for requests to agents, created on first use and destroyed on `shutdown`.
 * `tlsFor` is read once per new connection.
 */
export function agentDispatcher(shutdown: AbortSignal, tlsFor: () => tls.ConnectionOptions): Agent {
  let pool = pools.get(shutdown);
  if (pool) return pool;
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tls.connect({ host, port: Number(opts.port), servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], ...tlsFor() });
    socket.setNoDelay(true);
    const failed = (err: Error): void => callback(err, null);
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      socket.off('error', failed);
      callback(null, socket);
    });
    return socket;
  };
  pool = new Agent({ connect, keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS });
  pools.set(shutdown, pool);
  const created = pool;
  shutdown.addEventListener('abort', () => void created.destroy().catch(() => undefined), { once: true });
  return pool;
}

/** `https://host:port` with an IPv6 host in brackets. */
export function agentOrigin(host: string, port: number): string {
  return `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
