/**
 * The API server: HTTPS (or plain HTTP when no TLS material is given, for tests),
 * authentication (client certificate, bearer token), impersonation, authorization (Node → RBAC),
 * admission, and the REST machinery over a {@link Store}.
 *
 *   request ─▶ health? ─▶ authenticate (401) ─▶ impersonate? (403) ─▶ non-resource (version, discovery, openapi)
 *                                                                 └▶ metrics.k8s.io (metrics-api.ts) ─▶ authorize (403) ─▶ get/list
 *                                                                 └▶ parse path ─▶ authorize (403) ─▶ dispatch(verb)
 *                                                                                   (writes: admission, see admission/)
 *
 * `close()` stops accepting connections, ends watches and log streams, and waits for in-flight
 * requests; it does not close the store (its owner does).
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { edgeServerOptions, failureStatus, hardenHttpServer, parseRequestTarget, SERVER_JOIN_PATH, writeRawStatus, type ServerJoinBundle } from '@nodelet/api';
import { noopLogger, type Logger } from '@nodelet/base';
import type { Store } from '../storage/types.js';
import { createAuthorizerChain, forbiddenMessage } from './auth/authorizer.js';
import { impersonatedUser } from './auth/impersonation.js';
import { createNodeAuthorizer } from './auth/node-authorizer.js';
import { RbacAuthorizer, type RbacMirrors } from './auth/rbac/rbac-authorizer.js';
import { reconcileBootstrapPolicy } from './auth/rbac/reconcile.js';
import type { Authenticator, RequestAttributes, UserInfo } from './auth/types.js';
import { userFromClientCertificate } from './auth/x509-authenticator.js';
import type { NodeProxyConfig, RequestScope, ServedResource, ServerContext } from './context.js';
import { admitCreate } from './handlers/admit.js';
import { dispatch } from './handlers/dispatch.js';
import { proxyStreamUpgrade } from './handlers/node-proxy.js';
import { proxyPortForwardTunnel, tunnelledProtocols } from './handlers/portforward-tunnel.js';
import { ResourceMirror } from './mirror.js';
import { ensureDefaultStorageClass, ensureNamespaceDefaults } from './default-objects.js';
import { startNamespaceLifecycle } from './namespace-lifecycle.js';
import { serveServerJoinBundle } from './server-join.js';
import { clusterDnsIpOf, ensureKubeDnsService } from './kube-dns-service.js';
import { DEFAULT_SERVICE_CIDR } from './handlers/service-ip.js';
import { METRICS_DEFS, parseMetricsPath, serveMetrics, type MetricsSource } from './metrics-api.js';
import { serveNonResource } from './nonresource.js';
import { DEFAULT_API_SERVER_LIMITS, type ApiServerLimits } from './limits.js';
import { Registry } from './registry.js';
import { RequestGuard } from './request-guard.js';
import { RESOURCE_DEFS } from './resources.js';
import { sendError, sendJson } from './respond.js';
import { JWKS_PATH, jwks, OIDC_CONFIGURATION_PATH, openIdConfiguration } from './auth/serviceaccount/oidc.js';
import { looksLikeJwt, type ServiceAccountTokens } from './auth/serviceaccount/tokens.js';
import { parsePath, verbOf, notFoundPath, nameFromFieldSelector } from './router.js';
import { forbidden, toStatusError, unauthorized, StatusError } from './status.js';
import { WatchCache } from './watch-cache.js';
import { WatchEventEncoder } from './watch-encoding.js';
import type { JourneyTracer } from '@nodelet/api/tracing';
import { PodJourneys } from './pod-journeys.js';
import { isTracesPath, serveTraces } from './traces-endpoint.js';

export interface ApiServerOptions {
  store: Store;
  /**
   * The shared secrets served to a joining server (server-join.ts); undefined when this server
   * cannot share its control plane (SQLite).
   */
  serverJoinBundle?: () => Promise<ServerJoinBundle>;
  /**
   * Status of each etcd member and the alarms, served to those allowed `get` on
   * {@link ETCD_STATUS_PATH} (`nodelet doctor` with an admin kubeconfig). Absent: SQLite, 404.
   */
  etcdStatus?: (signal: AbortSignal) => Promise<unknown>;
  authenticator: Authenticator;
  logger?: Logger;
  /** PEM serving certificate and key; omit for plain HTTP (tests only). */
  tls?: { cert: string; key: string };
  /** The cluster CA (PEM): handed out with node credentials, and (with TLS) the client-certificate CA. */
  caPem?: string;
  /** Lifetime of issued node credentials (default one year). */
  nodeCredentialTtlMs?: number;
  /** Service-account token issuer and verifier (TokenRequest, JWT authentication, OIDC discovery). */
  serviceAccountTokens?: ServiceAccountTokens;
  /** Service ClusterIP range (default 10.96.0.0/16). */
  serviceCidr?: string;
  nodeProxy?: NodeProxyConfig;
  now?: () => number;
  bookmarkIntervalMs?: number;
  watchCacheCapacity?: number;
  /** Share each watch event's encoded bytes among its watchers (default true; false is the per-watcher baseline bench/watch-encoding.ts measures). */
  watchEncodeCache?: boolean;
  /** In-flight, timeout, header and slow-watcher bounds (limits.ts); defaults as kube-apiserver. */
  limits?: Partial<ApiServerLimits>;
  /** ClusterIP of kube-system/kube-dns, created at start when missing (default: the service range's 10th address; null: none). */
  clusterDnsIP?: string | null;
  /** Serves `metrics.k8s.io` from this source (the control plane's scraper, metrics/); without one the group is absent. */
  metrics?: MetricsSource;
  /** Records pod journeys (docs/tracing.md) and serves them at /debug/nodelet/traces/; unset: neither. */
  tracer?: JourneyTracer;
}

export interface ApiServer {
  listen(opts: { port: number; host: string }): Promise<{ port: number; url: string }>;
  readonly context: ServerContext;
  /**
   * Serves `tls` to new TLS connections from now on (certificate rotation, pki/rotation.ts);
   * open connections keep the certificate they negotiated. Throws on a plain-HTTP server or an
   * unusable pair, leaving the current one in place.
   */
  setServingCertificate(tls: { cert: string; key: string }): void;
  close(): Promise<void>;
}

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);
/** nodelet's own: the etcd members as the server sees them (docs/ha.md "Etcd cluster"). */
export const ETCD_STATUS_PATH = '/debug/nodelet/etcd';
/** Pod subresources that open a stream into the pod: authorized as `create` (as upstream does for WebSocket upgrades). */
const STREAM_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);
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
    const cache = new WatchCache({ store: opts.store, registry, logger: log, capacity: opts.watchCacheCapacity, capacityBytes: limits.watchCacheBytes });
    resources.set(`${def.group}/${def.version}/${def.plural}`, { def, registry, cache });
  }
  const servedDefs = opts.metrics ? [...RESOURCE_DEFS, ...METRICS_DEFS] : RESOURCE_DEFS;
  const rbacResource = (plural: string): ServedResource => resources.get(`rbac.authorization.k8s.io/v1/${plural}`)!;
  const mirror = (plural: string): ResourceMirror => new ResourceMirror({ served: rbacResource(plural), logger: log, stop: stop.signal });
  const mirrors: RbacMirrors = { roles: mirror('roles'), clusterRoles: mirror('clusterroles'), roleBindings: mirror('rolebindings'), clusterRoleBindings: mirror('clusterrolebindings') };
  const mirrorByPlural = new Map<string, ResourceMirror>([
    ['roles', mirrors.roles], ['clusterroles', mirrors.clusterRoles], ['rolebindings', mirrors.roleBindings], ['clusterrolebindings', mirrors.clusterRoleBindings],
  ]);
  // Every pod create reads its namespace (NamespaceLifecycle) and service account (ServiceAccount
  // admission): from memory, as upstream's listers, with the store read kept for a miss.
  const lookupMirrors = new Map<string, ResourceMirror>(
    ['namespaces', 'serviceaccounts'].map((plural) => [plural, new ResourceMirror({ served: resources.get(`/v1/${plural}`)!, logger: log, stop: stop.signal })]),
  );
  const rbac = new RbacAuthorizer(mirrors);
  const listPods = async (ns: string) => (await resources.get('/v1/pods')!.registry.list({ namespace: ns, filter: () => true })).items;
  // The Node authorizer's view of which pods are bound where (auth/node-authorizer.ts): memory first.
  const podMirror = new ResourceMirror({ served: resources.get('/v1/pods')!, logger: log, stop: stop.signal });
  const authorizer = createAuthorizerChain([
    createNodeAuthorizer({ listPods, cachedPods: (ns) => podMirror.inNamespace(ns) }),
    (user, a) => rbac.authorize(user, a),
  ]);
  const ctx: ServerContext = {
    store: opts.store,
    logger: log,
    now: opts.now ?? Date.now,
    resource: (g, v, p) => resources.get(`${g}/${v}/${p}`),
    resourceByKind: (apiVersion, kind) => [...resources.values()].find((r) => (r.def.group ? `${r.def.group}/${r.def.version}` : r.def.version) === apiVersion && r.def.kind === kind),
    resourceByGroup: (g, p) => [...resources.values()].find((r) => r.def.group === g && r.def.plural === p),
    shutdown: stop.signal,
    authenticateToken: (token) => authenticateBearer(token),
    nodeProxy: opts.nodeProxy ?? {},
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    authorizer,
    rbac,
    mirrorOf: (def) => (def.group === 'rbac.authorization.k8s.io' ? mirrorByPlural.get(def.plural) : def.group === '' ? lookupMirrors.get(def.plural) : undefined),
    caPem: opts.caPem,
    nodeCredentialTtlMs: opts.nodeCredentialTtlMs,
    serviceAccountTokens: opts.serviceAccountTokens,
    serviceCidr: opts.serviceCidr,
    maxWatchBufferBytes: limits.maxWatchBufferBytes,
    watchEncoder: new WatchEventEncoder({ share: opts.watchEncodeCache ?? true }),
    ...(opts.tracer ? { journeys: new PodJourneys(opts.tracer) } : {}),
  };
  /** Service-account JWTs go to their verifier; every other token to the token authenticator. */
  async function authenticateBearer(token: string): Promise<UserInfo | undefined> {
    if (opts.serviceAccountTokens && looksLikeJwt(token)) return opts.serviceAccountTokens.authenticate(ctx, token);
    return opts.authenticator.authenticate(token);
  }
  await ensureDefaultNamespaces(ctx);
  await ensureNamespaceDefaults(ctx, DEFAULT_NAMESPACES, opts.caPem, log);
  if (opts.clusterDnsIP !== null) await ensureKubeDnsService(ctx, opts.clusterDnsIP ?? clusterDnsIpOf(opts.serviceCidr ?? DEFAULT_SERVICE_CIDR), log);
  await ensureDefaultStorageClass(ctx);
  await reconcileBootstrapPolicy(ctx, log.child({ component: 'rbac-bootstrap' }));
  await Promise.all([...mirrorByPlural.values(), ...lookupMirrors.values(), podMirror].map((m) => m.start()));
  const lifecycle = startNamespaceLifecycle(ctx, [...resources.values()], log.child({ component: 'namespace-lifecycle' }));

  let serverAddress = '127.0.0.1:6443';

  /** Client certificate first, then bearer token (kube-apiserver's union authenticator order); 401 without either. */
  async function authenticate(req: http.IncomingMessage): Promise<UserInfo> {
    const fromCert = opts.tls && opts.caPem ? userFromClientCertificate(req.socket as TLSSocket) : undefined;
    if (fromCert) return fromCert;
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const user = m ? await authenticateBearer(m[1]!) : undefined;
    if (!user) throw unauthorized();
    return user;
  }

  /** The caller, or the user it impersonates (each impersonated part authorized). */
  async function requestUser(req: http.IncomingMessage): Promise<UserInfo> {
    return impersonatedUser(req, await authenticate(req), authorizer);
  }

  async function authorizeOrThrow(user: UserInfo, a: RequestAttributes): Promise<void> {
    const d = await authorizer.authorize(user, a);
    if (!d.allowed) throw forbidden(forbiddenMessage(user, a, d.reason || undefined));
  }

  async function resourceScope(req: http.IncomingMessage, res: http.ServerResponse, url: URL, user: UserInfo, reqLog: Logger): Promise<RequestScope | undefined> {
    const parsed = parsePath(ctx, url.pathname);
    if (parsed.type !== 'resource') return undefined;
    const p = parsed.path;
    const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    let verb = verbOf(req.method ?? 'GET', !!p.name, watch);
    // Streams into a pod need create, whatever the HTTP method (WebSocket upgrades are GETs).
    if (p.served.def.kind === 'Pod' && p.subresource && STREAM_SUBRESOURCES.has(p.subresource)) verb = 'create';
    // A list or watch of one object by metadata.name is authorized for that name (resourceNames rules).
    const name = p.name ?? (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(url.searchParams.get('fieldSelector')) : undefined);
    await authorizeOrThrow(user, { verb, group: p.group, resource: p.served.def.plural, subresource: p.subresource, namespace: p.namespace, name });
    return { ctx, req, res, url, user, log: reqLog, served: p.served, namespace: p.namespace, name: p.name, subresource: p.subresource, ...(p.proxyPath !== undefined ? { proxyPath: p.proxyPath } : {}) };
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
      if (url.pathname === SERVER_JOIN_PATH) {
        await serveServerJoinBundle(ctx, req, res, opts.serverJoinBundle);
        return;
      }
      const user = await requestUser(req);
      userName = user.name;
      release = guard.admit(req, user);
      const method = req.method ?? 'GET';
      if (method === 'GET' || method === 'HEAD') {
        const decision = await authorizer.authorize(user, { verb: 'get', path: url.pathname });
        if (serveOidcIfAllowed(decision.allowed, user, res, url) || serveNonResourceIfAllowed(decision.allowed, user, req, res, url)) return;
        if (isTracesPath(url.pathname)) {
          if (!decision.allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
          return serveTraces(ctx.journeys, url.pathname, res);
        }
        if (url.pathname === ETCD_STATUS_PATH && opts.etcdStatus) {
          if (!decision.allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
          const body = JSON.stringify(await opts.etcdStatus(AbortSignal.timeout(10_000)));
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(body);
          return;
        }
      }
      const metricsRequest = opts.metrics ? parseMetricsPath(url.pathname) : undefined;
      if (metricsRequest) {
        await serveMetrics(ctx, opts.metrics!, metricsRequest, { method, url, user }, authorizeOrThrow, res);
        return;
      }
      const scope = await resourceScope(req, res, url, user, log);
      if (!scope) throw notFoundPath();
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

  function serveOidcIfAllowed(allowed: boolean, user: UserInfo, res: http.ServerResponse, url: URL): boolean {
    const tokens = opts.serviceAccountTokens;
    if (!tokens || (url.pathname !== OIDC_CONFIGURATION_PATH && url.pathname !== JWKS_PATH)) return false;
    if (!allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
    if (url.pathname === OIDC_CONFIGURATION_PATH) sendJson(res, 200, openIdConfiguration(tokens));
    else sendJson(res, 200, jwks(tokens), 'application/jwk-set+json');
    return true;
  }

  function serveNonResourceIfAllowed(allowed: boolean, user: UserInfo, req: http.IncomingMessage, res: http.ServerResponse, url: URL): boolean {
    const served = serveNonResource(req, res, url, serverAddress, servedDefs);
    if (served && !allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
    return served;
  }

  async function handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Node drops its own error listener from an upgraded socket: a reset while we authenticate
    // would otherwise be an uncaught 'error' event.
    socket.on('error', () => socket.destroy());
    try {
      const url = parseRequestTarget(req.url);
      if (!url) throw new StatusError(400, 'BadRequest', 'malformed request target');
      const user = await requestUser(req);
      const res = new http.ServerResponse(req);
      const scope = await resourceScope(req, res, url, user, log);
      if (!scope || scope.served.def.kind !== 'Pod' || !scope.subresource || !STREAM_SUBRESOURCES.has(scope.subresource) || !scope.name) throw notFoundPath();
      const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
      if (upgrade !== 'websocket' && upgrade !== 'spdy/3.1') {
        throw new StatusError(400, 'BadRequest', `${scope.subresource} needs an upgrade to a WebSocket or to SPDY/3.1, not "${upgrade}"`);
      }
      // kubectl's port-forward tunnels SPDY in a WebSocket: unwrapped here; everything else is spliced to the agent.
      if (scope.subresource === 'portforward' && upgrade === 'websocket' && tunnelledProtocols(req).length > 0) await proxyPortForwardTunnel(scope, socket, head);
      else await proxyStreamUpgrade(scope, socket, head);
    } catch (err) {
      const status = toStatusError(err);
      if (status.code >= 500) log.error({ err, path: req.url?.split('?')[0] }, 'Upgrade request failed');
      writeRawStatus(socket, failureStatus(status.code, status.reason, status.message, status.details));
    }
  }

  // Node's requestTimeout bounds receiving a request, not the reply, so watches are unaffected.
  // Client certificates are asked for but optional (tokens work without one); a certificate is
  // only believed when it verifies against the cluster CA (x509-authenticator.ts).
  const edge = edgeServerOptions(limits);
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ...(opts.caPem ? { ca: opts.caPem, requestCert: true, rejectUnauthorized: false } : {}), ...edge })
    : http.createServer(edge);
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
    setServingCertificate(tls) {
      if (!(server instanceof https.Server)) throw new Error('the API server serves plain HTTP; there is no certificate to replace');
      server.setSecureContext({ cert: tls.cert, key: tls.key });
    },
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
