/**
 * The API server: HTTPS (or plain HTTP when no TLS material is given, for tests), bearer-token
 * authentication, authorization, and the REST machinery over a {@link Store}.
 *
 *   request ─▶ health? ─▶ authenticate (401) ─▶ non-resource (version, discovery, openapi)
 *                                            └▶ parse path ─▶ authorize (403) ─▶ dispatch(verb)
 *
 * `close()` stops accepting connections, ends watches and log streams, and waits for in-flight
 * requests; it does not close the store (its owner does).
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { edgeServerOptions, failureStatus, hardenHttpServer, parseRequestTarget, writeRawStatus } from '@nodelet/api';
import { noopLogger, type Logger } from '@nodelet/base';
import type { Store } from '../storage/types.js';
import { authorize, restrictCreate } from './auth/authorizer.js';
import { issueNodeCredential, NODE_CREDENTIALS_PATH } from './auth/node-credentials.js';
import type { Authenticator, UserInfo } from './auth/types.js';
import type { NodeProxyConfig, RequestScope, ServedResource, ServerContext } from './context.js';
import { admitCreate } from './handlers/admit.js';
import { dispatch } from './handlers/dispatch.js';
import { proxyExecUpgrade } from './handlers/node-proxy.js';
import { decodeObjectBody, parseJson, readBody } from './media.js';
import { startNamespaceLifecycle } from './namespace-lifecycle.js';
import { serveNonResource } from './nonresource.js';
import { DEFAULT_API_SERVER_LIMITS, type ApiServerLimits } from './limits.js';
import { Registry } from './registry.js';
import { RequestGuard } from './request-guard.js';
import { RESOURCE_DEFS } from './resources.js';
import { sendError, sendJson } from './respond.js';
import { parsePath, verbOf, notFoundPath } from './router.js';
import { forbidden, toStatusError, unauthorized, StatusError } from './status.js';
import { WatchCache } from './watch-cache.js';

export interface ApiServerOptions {
  store: Store;
  authenticator: Authenticator;
  logger?: Logger;
  /** PEM serving certificate and key; omit for plain HTTP (tests only). */
  tls?: { cert: string; key: string };
  /** The cluster CA (PEM), handed out with node credentials. */
  caPem?: string;
  nodeProxy?: NodeProxyConfig;
  now?: () => number;
  bookmarkIntervalMs?: number;
  watchCacheCapacity?: number;
  /** In-flight, timeout, header and slow-watcher bounds (limits.ts); defaults as kube-apiserver. */
  limits?: Partial<ApiServerLimits>;
}

export interface ApiServer {
  listen(opts: { port: number; host: string }): Promise<{ port: number; url: string }>;
  readonly context: ServerContext;
  close(): Promise<void>;
}

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function createApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.logger ?? noopLogger;
  const limits: ApiServerLimits = { ...DEFAULT_API_SERVER_LIMITS, ...opts.limits };
  const guard = new RequestGuard({ limits, logger: log });
  const stop = new AbortController();
  // Every watch and log stream listens for shutdown: one listener per long-running request.
  setMaxListeners(0, stop.signal);
  const resources = new Map<string, ServedResource>();
  for (const def of RESOURCE_DEFS) {
    const registry = new Registry(def, opts.store);
    const cache = new WatchCache({ store: opts.store, registry, logger: log, capacity: opts.watchCacheCapacity });
    resources.set(`${def.group}/${def.version}/${def.plural}`, { def, registry, cache });
  }
  const ctx: ServerContext = {
    store: opts.store,
    logger: log,
    now: opts.now ?? Date.now,
    resource: (g, v, p) => resources.get(`${g}/${v}/${p}`),
    resourceByKind: (apiVersion, kind) => [...resources.values()].find((r) => (r.def.group ? `${r.def.group}/${r.def.version}` : r.def.version) === apiVersion && r.def.kind === kind),
    resourceByGroup: (g, p) => [...resources.values()].find((r) => r.def.group === g && r.def.plural === p),
    shutdown: stop.signal,
    authenticateToken: (token) => opts.authenticator.authenticate(token),
    nodeProxy: opts.nodeProxy ?? {},
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    maxWatchBufferBytes: limits.maxWatchBufferBytes,
  };
  await ensureDefaultNamespaces(ctx);
  const lifecycle = startNamespaceLifecycle(ctx, [...resources.values()], log.child({ component: 'namespace-lifecycle' }));

  const getPod = (ns: string, name: string) => ctx.resource('', 'v1', 'pods')!.registry.find(ns, name);
  const listPods = async (ns: string) => (await ctx.resource('', 'v1', 'pods')!.registry.list({ namespace: ns, filter: () => true })).items;
  let serverAddress = '127.0.0.1:6443';

  async function authenticate(req: http.IncomingMessage): Promise<UserInfo> {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const user = m ? await opts.authenticator.authenticate(m[1]!) : undefined;
    if (!user) throw unauthorized();
    return user;
  }

  async function resourceScope(req: http.IncomingMessage, res: http.ServerResponse, url: URL, user: UserInfo, reqLog: Logger): Promise<RequestScope | undefined> {
    const parsed = parsePath(ctx, url.pathname);
    if (parsed.type !== 'resource') return undefined;
    const p = parsed.path;
    const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    const verb = verbOf(req.method ?? 'GET', !!p.name, watch);
    const decision = await authorize(user, { verb, group: p.group, resource: p.served.def.plural, subresource: p.subresource, namespace: p.namespace, name: p.name }, { getPod, listPods });
    if (!decision.allowed) {
      throw forbidden(`${p.served.def.plural}${p.served.def.group ? '.' + p.served.def.group : ''}${p.name ? ` "${p.name}"` : ''} is forbidden: ${decision.reason}`);
    }
    return { ctx, req, res, url, user, log: reqLog, served: p.served, namespace: p.namespace, name: p.name, subresource: p.subresource };
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const started = performance.now();
    let userName = '';
    let release: (() => void) | undefined;
    try {
      if (HEALTH_PATHS.has(url.pathname) || url.pathname.startsWith('/healthz/') || url.pathname.startsWith('/readyz/') || url.pathname.startsWith('/livez/')) {
        res.writeHead(stop.signal.aborted ? 503 : 200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(stop.signal.aborted ? 'shutting down' : 'ok');
        return;
      }
      const user = await authenticate(req);
      userName = user.name;
      release = guard.admit(req, user);
      const reqLog = log;
      const method = req.method ?? 'GET';
      if (url.pathname === NODE_CREDENTIALS_PATH) {
        const decision = await authorize(user, { verb: method === 'POST' ? 'create' : method.toLowerCase(), path: url.pathname }, { getPod, listPods });
        if (!decision.allowed) throw forbidden(decision.reason);
        if (method !== 'POST') throw new StatusError(405, 'MethodNotAllowed', 'only POST is supported');
        sendJson(res, 201, await issueNodeCredential(ctx, parseJson(await readBody(req)), user, opts.caPem));
        return;
      }
      if (method === 'GET' || method === 'HEAD') {
        const decision = await authorize(user, { verb: 'get', path: url.pathname }, { getPod, listPods });
        if (serveNonResourceIfAllowed(decision.allowed, req, res, url)) return;
      }
      const scope = await resourceScope(req, res, url, user, reqLog);
      if (!scope) throw notFoundPath();
      if (method === 'POST' && !scope.name && scope.user.groups.includes('system:nodes')) {
        await dispatchCreateWithRestriction(scope);
        return;
      }
      await dispatch(scope);
    } catch (err) {
      const status = toStatusError(err);
      if (status.code >= 500) log.error({ err, method: req.method, path: url.pathname }, 'Request failed');
      if (res.headersSent) res.end();
      else sendError(res, status);
    } finally {
      release?.();
      log.debug({ method: req.method, path: url.pathname, code: res.statusCode, user: userName, ms: Math.round(performance.now() - started) }, 'Request');
    }
  }

  function serveNonResourceIfAllowed(allowed: boolean, req: http.IncomingMessage, res: http.ServerResponse, url: URL): boolean {
    const served = serveNonResource(req, res, url, serverAddress);
    if (served && !allowed) throw forbidden(`forbidden: cannot get path "${url.pathname}"`);
    return served;
  }

  // Nodes may only create their own Node/Lease: the name is in the body, so read it here first.
  async function dispatchCreateWithRestriction(scope: RequestScope): Promise<void> {
    const body = await readBody(scope.req);
    const obj = decodeObjectBody(scope.req.headers['content-type'], body) as { metadata?: { name?: string } };
    const decision = restrictCreate(scope.user, scope.served.def.plural, { metadata: obj.metadata ?? {} });
    if (!decision.allowed) throw forbidden(decision.reason);
    await dispatch({ ...scope, body });
  }

  async function handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Node drops its own error listener from an upgraded socket: a reset while we authenticate
    // would otherwise be an uncaught 'error' event.
    socket.on('error', () => socket.destroy());
    try {
      const url = parseRequestTarget(req.url);
      if (!url) throw new StatusError(400, 'BadRequest', 'malformed request target');
      const user = await authenticate(req);
      const res = new http.ServerResponse(req);
      const scope = await resourceScope(req, res, url, user, log);
      if (!scope || scope.served.def.kind !== 'Pod' || scope.subresource !== 'exec' || !scope.name) throw notFoundPath();
      if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
        throw new StatusError(400, 'BadRequest', 'only WebSocket exec (v5.channel.k8s.io) is supported; SPDY is not');
      }
      await proxyExecUpgrade(scope, socket, head);
    } catch (err) {
      const status = toStatusError(err);
      if (status.code >= 500) log.error({ err, path: req.url?.split('?')[0] }, 'Upgrade request failed');
      writeRawStatus(socket, failureStatus(status.code, status.reason, status.message, status.details));
    }
  }

  // Node's requestTimeout bounds receiving a request, not the reply, so watches are unaffected.
  const edge = edgeServerOptions(limits);
  const server = opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ...edge }) : http.createServer(edge);
  hardenHttpServer(server);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void guard.serve(req, res, (url) => handle(req, res, url)));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void handleUpgrade(req, socket, head));
  const sockets = new Set<Socket>();
  server.on(opts.tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  let closing: Promise<void> | undefined;
  return {
    context: ctx,
    async listen({ port, host }) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      serverAddress = `${h}:${addr.port}`;
      log.info({ address: serverAddress, tls: !!opts.tls }, 'API server listening');
      return { port: addr.port, url: `${opts.tls ? 'https' : 'http'}://${h === '0.0.0.0' ? '127.0.0.1' : h}:${addr.port}` };
    },
    close() {
      closing ??= (async () => {
        stop.abort();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        for (const r of resources.values()) r.cache.close();
        // Give in-flight requests a moment, then cut what is left (watch sockets end on abort).
        const deadline = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 2000);
        await closed;
        clearTimeout(deadline);
        await lifecycle.catch(() => undefined);
      })();
      return closing;
    },
  };
}

async function ensureDefaultNamespaces(ctx: ServerContext): Promise<void> {
  const ns = ctx.resource('', 'v1', 'namespaces')!;
  for (const name of DEFAULT_NAMESPACES) {
    if (await ns.registry.find(undefined, name)) continue;
    const obj = admitCreate(ctx, ns.def, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await ns.registry.create(obj).catch((err: unknown) => {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    });
  }
}
