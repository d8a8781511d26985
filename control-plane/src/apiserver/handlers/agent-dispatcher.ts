/**
 * The HTTP client of the server → agent proxy for plain requests (pods/log): one undici `Agent`
 * per API server, keeping connections to each node's agent alive between requests.
 *
 * A pool dials with the TLS material (client pair, agent CA) it was made for. When that material
 * changes (certificate rotation, pki/rotation.ts), the next request gets a new pool and the old
 * one is closed: its idle connections go at once and requests in flight on it (a `logs -f`)
 * finish first. Keeping the old pool would let a connection that stays busy present the old
 * client certificate for as long as requests keep coming, past its expiry; client-go's
 * certificate-rotating dialer closes its connections on rotation for the same reason. Stream
 * upgrades (`dialAgent`) dial per request and read the material then. Every pool is destroyed
 * when the server shuts down (`shutdown`), so no idle socket keeps a process alive.
 */
import tls from 'node:tls';
import { isIP } from 'node:net';
import { Agent, type buildConnector } from 'undici';

/** Idle keep-alive sockets to an agent are closed after this long (kubelet's own server idles out at 2 min). */
const KEEP_ALIVE_MS = 30_000;

interface Pools {
  /** The pool new requests use, and the material it dials with. */
  current: { agent: Agent; tls: tls.ConnectionOptions };
  /** Every pool not yet closed (the current one, and old ones finishing their requests). */
  open: Set<Agent>;
}

const pools = new WeakMap<AbortSignal, Pools>();

/**
 * The dispatcher for requests to agents: created on first use, replaced when `tlsFor()` returns
 * different material, destroyed on `shutdown`.
 */
export function agentDispatcher(shutdown: AbortSignal, tlsFor: () => tls.ConnectionOptions): Agent {
  const material = tlsFor();
  let p = pools.get(shutdown);
  if (p && sameMaterial(p.current.tls, material)) return p.current.agent;
  const agent = new Agent({ connect: connector(material), keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS });
  if (!p) {
    const created: Pools = { current: { agent, tls: material }, open: new Set() };
    pools.set(shutdown, created);
    shutdown.addEventListener('abort', () => {
      for (const a of created.open) void a.destroy().catch(() => undefined); // shutting down: a pool that fails to close has nobody to tell
      created.open.clear();
    }, { once: true });
    p = created;
  } else {
    const old = p.current.agent;
    const open = p.open;
    p.current = { agent, tls: material };
    // Graceful: requests already sent on the old pool finish, then its sockets close.
    void old.close().catch(() => undefined).finally(() => open.delete(old));
  }
  p.open.add(agent);
  return agent;
}

function connector(material: tls.ConnectionOptions): buildConnector.connector {
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tls.connect({ host, port: Number(opts.port), servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], ...material });
    socket.setNoDelay(true);
    const failed = (err: Error): void => callback(err, null);
    socket.once('error', failed);
    socket.once('secureConnect', () => {
      socket.off('error', failed);
      callback(null, socket);
    });
    return socket;
  };
}

/** Whether two sets of TLS options carry the same values (the PEM strings compare as values). */
function sameMaterial(a: tls.ConnectionOptions, b: tls.ConnectionOptions): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof tls.ConnectionOptions)[]);
  return [...keys].every((k) => a[k] === b[k]);
}

/** `https://host:port` with an IPv6 host in brackets. */
export function agentOrigin(host: string, port: number): string {
  return `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
