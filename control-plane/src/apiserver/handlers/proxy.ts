/**
 * `pods/proxy`, `services/proxy` and `nodes/proxy` (kube-apiserver's proxy REST of each): the
 * request, with its method, query, headers and body, is sent to the location proxy-location.ts
 * finds, and the answer (status, headers, body) streamed back.
 *
 *   kubectl get --raw /api/v1/namespaces/<ns>/services/web:80/proxy/<path>?q → GET http://<endpoint>:<targetPort>/<path>?q
 *   kubectl proxy → /api/v1/namespaces/<ns>/pods/<p>:8080/proxy/<path>       → http://<podIP>:8080/<path>
 *   /api/v1/nodes/<n>/proxy/<path>                                            → https://<node>:<agent port>/<path> (agent client cert)
 *
 * Methods GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS (upstream's ProxyMethods); RBAC checked
 * `get`/`create`/`update`/`patch`/`delete` on the `proxy` subresource (filters/authorization.ts),
 * then CONNECT admission webhooks with the `{Pod,Service,Node}ProxyOptions` (`admitProxy`).
 * The caller's credentials (Authorization, Impersonate-*) and hop-by-hop headers are not passed
 * on; X-Forwarded-For and X-Forwarded-Uri are added. Redirects and HTML links to the target's own
 * paths are put under the proxy path (proxy-rewrite.ts), as upstream's proxy transport does. An upgrade (a WebSocket) through pods/proxy or services/proxy is spliced
 * to the target (`proxyUpgrade`); through nodes/proxy to the agent it is refused, since the agent
 * would see the server's own credentials on a stream (exec, attach) the caller's RBAC
 * (`get nodes/proxy`) did not grant as `create pods/exec`.
 * A target that cannot be reached is a 503 `error trying to reach service: …`.
 */
import { pipeline } from 'node:stream/promises';
import net, { isIP } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { admitConnect } from '../admission/index.js';
import type { RequestScope } from '../context.js';
import type { ApiObject } from '../object.js';
import { badRequest, methodNotAllowed, StatusError } from '../status.js';
import { decodeBody, isHtml, MAX_REWRITTEN_BYTES, rewriteHtml, rewriteProxyUrl } from './proxy-rewrite.js';
import { agentDispatcher } from './agent-dispatcher.js';
import { agentAuthHeaders, agentTlsOptions } from './node-proxy.js';
import { nodeProxyLocation, podProxyLocation, serviceProxyLocation, unavailable, type ProxyLocation } from './proxy-location.js';

/** The methods the proxy subresources connect (upstream's proxyMethods). */
export const PROXY_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Request headers never forwarded: hop-by-hop ones and the caller's own credentials. */
const DROPPED_REQUEST = new Set([
  'host', 'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'authorization',
]);
const DROPPED_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Dispatchers for plain targets (pods, services, other node ports); https ones do not verify, as upstream's proxy transport. */
const plainDispatchers = new WeakMap<AbortSignal, { http: Agent; https: Agent }>();

function plainDispatcher(shutdown: AbortSignal, scheme: 'http' | 'https'): Agent {
  let d = plainDispatchers.get(shutdown);
  if (!d) {
    const made = { http: new Agent({ keepAliveTimeout: 30_000 }), https: new Agent({ keepAliveTimeout: 30_000, connect: { rejectUnauthorized: false } }) };
    shutdown.addEventListener('abort', () => {
      void made.http.destroy().catch(() => undefined); // shutting down: nobody to tell
      void made.https.destroy().catch(() => undefined); // shutting down: nobody to tell
    }, { once: true });
    plainDispatchers.set(shutdown, made);
    d = made;
  }
  return d[scheme];
}

/**
 * CONNECT admission (webhooks) of the proxy request, its object the PodProxyOptions,
 * ServiceProxyOptions or NodeProxyOptions `{path}` (the path after `proxy/`, as upstream); a
 * mutating webhook's new `path` is where the request then goes.
 */
async function admitProxy(s: RequestScope): Promise<string> {
  const path = s.proxyPath ?? '/';
  const object: ApiObject = { metadata: {}, path: path.slice(1) };
  await admitConnect(s.ctx, { operation: 'CONNECT', user: s.user, def: s.served.def, subresource: 'proxy', namespace: s.namespace, name: s.name, object, signal: s.signal });
  return typeof object.path === 'string' && object.path !== path.slice(1) ? `/${object.path.replace(/^\/+/, '')}` : path;
}

function locate(s: RequestScope): Promise<ProxyLocation> {
  const kind = s.served.def.kind;
  if (kind === 'Node') return nodeProxyLocation(s.ctx, s.name!);
  if (kind === 'Service') return serviceProxyLocation(s.ctx, s.namespace!, s.name!);
  return podProxyLocation(s.ctx, s.namespace!, s.name!);
}

/** Serves a `proxy` subresource request of a pod, a service or a node. */
export async function handleProxy(s: RequestScope): Promise<void> {
  const method = s.req.method ?? 'GET';
  if (!PROXY_METHODS.has(method)) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const path = await admitProxy(s);
  const loc = await locate(s);
  const dispatcher = loc.agent ? agentDispatcher(s.ctx.shutdown, () => agentTlsOptions(s.ctx)) : plainDispatcher(s.ctx.shutdown, loc.scheme);
  const headers = forwardedHeaders(s);
  if (loc.agent) Object.assign(headers, agentAuthHeaders(s.ctx));
  const stop = new AbortController();
  const abort = (): void => stop.abort();
  s.res.on('close', abort);
  s.ctx.shutdown.addEventListener('abort', abort, { once: true });
  try {
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
    let res: Dispatcher.ResponseData;
    try {
      res = await dispatcher.request({
        origin: origin(loc), path: `${path}${s.url.search}`, method: method as Dispatcher.HttpMethod, headers, signal: stop.signal,
        ...(hasBody ? { body: s.req } : {}),
      });
    } catch (err) {
      throw unavailable(`error trying to reach service: ${(err as Error).message}`);
    }
    const prefix = proxyPrefix(s);
    const targetHost = origin(loc).replace(/^https?:\/\//, '');
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined || DROPPED_RESPONSE.has(k)) continue;
      out[k] = k === 'location' && typeof v === 'string' ? rewriteProxyUrl(v, prefix, targetHost) : v;
    }
    if (method !== 'HEAD' && isHtml(res.headers['content-type'])) {
      const raw = await readCapped(res.body);
      const encoding = res.headers['content-encoding'];
      const decoded = decodeBody(raw, typeof encoding === 'string' ? encoding : undefined);
      const body = decoded ? Buffer.from(rewriteHtml(decoded.toString('utf8'), prefix, targetHost)) : raw;
      if (decoded) delete out['content-encoding'];
      out['content-length'] = String(body.length);
      s.res.writeHead(res.statusCode, out);
      s.res.end(body);
      return;
    }
    s.res.writeHead(res.statusCode, out);
    // An aborted or broken stream is not an error to report once the status line went out.
    await pipeline(res.body, s.res).catch(() => undefined);
  } finally {
    s.res.off('close', abort);
    s.ctx.shutdown.removeEventListener('abort', abort);
  }
}

/**
 * An upgrade request through pods/proxy or services/proxy: the request head (the caller's
 * credentials taken out) goes to the target, then bytes flow both ways, the target's `101` and
 * frames included, until either side closes.
 */
export async function proxyUpgrade(s: RequestScope, socket: Duplex, head: Buffer): Promise<void> {
  if (s.served.def.kind === 'Node') throw badRequest('upgrade requests through nodes/proxy are not served: use the pods/exec, attach and portforward subresources');
  if (!PROXY_METHODS.has(s.req.method ?? 'GET')) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const path = await admitProxy(s);
  const loc = await locate(s);
  const port = loc.port ?? (loc.scheme === 'https' ? 443 : 80);
  const upstream: net.Socket = loc.scheme === 'https'
    ? tls.connect({ host: loc.host, port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] })
    : net.connect({ host: loc.host, port });
  await new Promise<void>((resolve, reject) => {
    upstream.once(loc.scheme === 'https' ? 'secureConnect' : 'connect', resolve);
    upstream.once('error', (err) => reject(unavailable(`error trying to reach service: ${err.message}`)));
  });
  const lines = [`${s.req.method ?? 'GET'} ${path}${s.url.search} HTTP/1.1`, `Host: ${origin(loc).replace(/^https?:\/\//, '')}`];
  for (const [k, v] of Object.entries(forwardedHeaders(s, true))) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
  upstream.write(lines.join('\r\n') + '\r\n\r\n');
  if (head.length) upstream.write(head);
  socket.pipe(upstream);
  upstream.pipe(socket);
  const close = (): void => {
    socket.destroy();
    upstream.destroy();
  };
  socket.on('error', close);
  upstream.on('error', close);
  socket.on('close', close);
  upstream.on('close', close);
  s.ctx.shutdown.addEventListener('abort', close, { once: true });
  upstream.once('close', () => s.ctx.shutdown.removeEventListener('abort', close));
}

function origin(loc: ProxyLocation): string {
  const host = isIP(loc.host) === 6 ? `[${loc.host}]` : loc.host;
  return `${loc.scheme}://${host}${loc.port !== undefined ? `:${loc.port}` : ''}`;
}

/** The caller's headers for the target; an upgrade keeps its `Upgrade` and `Connection`. */
function forwardedHeaders(s: RequestScope, upgrade = false): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(s.req.headersDistinct)) {
    if (!v || k.startsWith('impersonate-')) continue;
    if (DROPPED_REQUEST.has(k) && !(upgrade && (k === 'upgrade' || k === 'connection'))) continue;
    out[k] = v.length === 1 ? v[0]! : v;
  }
  // Where the client reached the target, as upstream's proxy transport says it.
  out['x-forwarded-uri'] = `${proxyPrefix(s)}${s.proxyPath ?? '/'}`;
  const client = s.req.socket.remoteAddress;
  if (client) out['x-forwarded-for'] = out['x-forwarded-for'] ? `${String(out['x-forwarded-for'])}, ${client}` : client;
  return out;
}

/** A body read whole, refused past {@link MAX_REWRITTEN_BYTES}. */
async function readCapped(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > MAX_REWRITTEN_BYTES) throw new StatusError(502, 'InternalError', `the proxied HTML answer is larger than ${MAX_REWRITTEN_BYTES} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** The API path of the proxy itself: `/api/v1[/namespaces/<ns>]/<plural>/<name>/proxy`. */
export function proxyPrefix(s: Pick<RequestScope, 'namespace' | 'name' | 'served'>): string {
  const ns = s.namespace !== undefined ? `/namespaces/${encodeURIComponent(s.namespace)}` : '';
  return `/api/v1${ns}/${s.served.def.plural}/${encodeURIComponent(s.name!).replace(/%3A/g, ':')}/proxy`;
}
