/**
 * The API server: HTTPS (or plain HTTP when no TLS material is given, for tests), and the REST
 * machinery over a {@link Store}. Every request goes through one chain of filters
 * (filters/chain.ts), then to the handler at its end:
 *
 *   recovery ─▶ request info ─▶ (console's static files at /ui/) ─▶ timeout ─▶ public paths ─▶ authentication ─▶ audit ─▶ impersonation
 *            ─▶ max in flight ─▶ authorization ─▶ serveRequest: non-resource │ metrics.k8s.io │ dispatch(verb)
 *                                                                             (writes: admission, see admission/)
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
import { edgeServerOptions, hardenHttpServer, listenBacklog, queryBool, type ServerJoinBundle } from '@nodelet/api';
import { linkAbort, noopLogger, type Logger } from '@nodelet/base';
import type { Store } from '../storage/types.js';
import { createAuthorizerChain, forbiddenMessage } from './auth/authorizer.js';
import { createNodeAuthorizer } from './auth/node-authorizer.js';
import { RbacAuthorizer, type RbacMirrors } from './auth/rbac/rbac-authorizer.js';
import { reconcileBootstrapPolicy } from './auth/rbac/reconcile.js';
import type { Authenticator, UserInfo } from './auth/types.js';
import { pinClientCertificate } from './auth/x509-authenticator.js';
import type { NodeProxyConfig, ServedResource, ServerContext } from './context.js';
import { admitCreate } from './handlers/admit.js';
import { dispatch } from './handlers/dispatch.js';
import { proxyStreamUpgrade } from './handlers/node-proxy.js';
import { proxyUpgrade } from './handlers/proxy.js';
import { serveWatchUpgrade } from './handlers/watch-websocket.js';
import { proxyPortForwardTunnel, tunnelledProtocols } from './handlers/portforward-tunnel.js';
import { ResourceMirror } from './mirror.js';
import { ensureDefaultStorageClass, ensureNamespaceDefaults, ensureSystemPriorityClasses } from './default-objects.js';
import { clusterDnsIpOf, ensureKubeDnsService } from './kube-dns-service.js';
import { DEFAULT_SERVICE_CIDR } from './handlers/service-ip.js';
import { METRICS_DEFS, parseMetricsPath, serveMetrics, type MetricsSource } from './metrics-api.js';
import { serveNonResource } from './nonresource.js';
import { consoleFilter, loadConsoleBundle } from './console.js';
import { DEFAULT_API_SERVER_LIMITS, InflightLimiter, type ApiServerLimits } from './limits.js';
import { Registry } from './registry.js';
import { RESOURCE_DEFS } from './resources.js';
import type { ResourceDef } from './resource.js';
import { ResourceCatalog } from './catalog.js';
import { startCrdController } from './apiextensions/controller.js';
import { sendJson } from './respond.js';
import { JWKS_PATH, jwks, OIDC_CONFIGURATION_PATH, openIdConfiguration } from './auth/serviceaccount/oidc.js';
import { looksLikeJwt, type ServiceAccountTokens } from './auth/serviceaccount/tokens.js';
import { notFoundPath } from './router.js';
import { forbidden, StatusError } from './status.js';
import { WatchCache } from './watch-cache.js';
import { WatchEventEncoder } from './watch-encoding.js';
import type { JourneyTracer } from '@nodelet/api/tracing';
import { PodJourneys } from './pod-journeys.js';
import { isTracesPath, serveTraces } from './traces-endpoint.js';
import { IMAGE_CATALOGUE_PATH, serveImageCatalogue, type ImageCatalogueSource } from './image-catalogue.js';
import type { PodSecurityConfig } from './admission/pod-security/config.js';
import { ApiRequest, runChain, type Filter } from './filters/chain.js';
import { recoveryFilter } from './filters/recovery.js';
import { requestInfoFilter } from './filters/request-info.js';
import { timeoutFilter } from './filters/timeout.js';
import { publicPathsFilter } from './filters/public-paths.js';
import { authenticationFilter } from './filters/authentication.js';
import { auditBeginFilter, auditFilter } from './filters/audit.js';
import { createAuditor, type AuditLogConfig } from './audit/index.js';
import { impersonationFilter } from './filters/impersonation.js';
import { maxInflightFilter } from './filters/max-inflight.js';
import { authorizationFilter, authorizeOrThrow, STREAM_SUBRESOURCES } from './filters/authorization.js';

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
  /** Audit logging (`--audit-policy-file`, `--audit-log-*`; audit/); unset: none. */
  audit?: AuditLogConfig;
  /** PodSecurity admission defaults and exemptions (`--admission-control-config-file`); unset: privileged everywhere. */
  podSecurity?: PodSecurityConfig;
  /** Serves the web console's built files from `dir` at /ui/ (console.ts, docs/console.md); unset: no /ui/. */
  console?: { dir: string };
  /** The registry this server runs, listed at /nodelet/registry/catalog (image-catalogue.ts); read per request (the registry starts after the API server). */
  imageCatalogue?: () => ImageCatalogueSource | undefined;
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
  /** Requests holding an in-flight slot now, per pool (tests, diagnostics). */
  inflight(): { readOnly: number; mutating: number };
  close(): Promise<void>;
}

/** nodelet's own: the etcd members as the server sees them (docs/ha.md "Etcd cluster"). */
export const ETCD_STATUS_PATH = '/debug/nodelet/etcd';
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/**
 * Pod Security labels a default namespace gets when this server creates it (never added later:
 * an operator's change stays): `default` warns about baseline violations, `kube-system` is
 * enforced privileged whatever the configured defaults (docs/security.md "Pod Security").
 */
const DEFAULT_NAMESPACE_LABELS: Readonly<Record<string, Record<string, string>>> = {
  default: { 'pod-security.kubernetes.io/warn': 'baseline' },
  'kube-system': { 'pod-security.kubernetes.io/enforce': 'privileged' },
};

export async function createApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.logger ?? noopLogger;
  const limits: ApiServerLimits = { ...DEFAULT_API_SERVER_LIMITS, ...opts.limits };
  const stop = new AbortController();
  // Every watch and log stream listens for shutdown: one listener per long-running request.
  setMaxListeners(0, stop.signal);
  const catalog = new ResourceCatalog(RESOURCE_DEFS, (def) => {
    const registry = new Registry(def, opts.store);
    const cache = new WatchCache({ store: opts.store, registry, logger: log, capacity: opts.watchCacheCapacity, capacityBytes: limits.watchCacheBytes });
    return { def, registry, cache };
  });
  const servedDefs = (): ResourceDef[] => (opts.metrics ? [...catalog.defs(), ...METRICS_DEFS] : catalog.defs());
  const rbacResource = (plural: string): ServedResource => catalog.get('rbac.authorization.k8s.io', 'v1', plural)!;
  const mirror = (plural: string): ResourceMirror => new ResourceMirror({ served: rbacResource(plural), logger: log, stop: stop.signal });
  const mirrors: RbacMirrors = { roles: mirror('roles'), clusterRoles: mirror('clusterroles'), roleBindings: mirror('rolebindings'), clusterRoleBindings: mirror('clusterrolebindings') };
  const mirrorByPlural = new Map<string, ResourceMirror>([
    ['roles', mirrors.roles], ['clusterroles', mirrors.clusterRoles], ['rolebindings', mirrors.roleBindings], ['clusterrolebindings', mirrors.clusterRoleBindings],
  ]);
  // Every pod create reads its namespace (NamespaceLifecycle), service account (ServiceAccount
  // admission), the namespace's LimitRanges and ResourceQuotas and the PriorityClasses: from
  // memory, as upstream's listers (mirror.ts findMirrored, listMirrored).
  const lookupMirrors = new Map<string, ResourceMirror>(
    ['namespaces', 'serviceaccounts', 'limitranges', 'resourcequotas'].map((plural) => [plural, new ResourceMirror({ served: catalog.get('', 'v1', plural)!, logger: log, stop: stop.signal })]),
  );
  const priorityClassMirror = new ResourceMirror({ served: catalog.get('scheduling.k8s.io', 'v1', 'priorityclasses')!, logger: log, stop: stop.signal });
  // Every write reads the admission webhook configurations (admission/webhook/dispatch.ts): from memory.
  const webhookMirrors = new Map<string, ResourceMirror>(
    ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'].map((plural) => [plural, new ResourceMirror({ served: catalog.get('admissionregistration.k8s.io', 'v1', plural)!, logger: log, stop: stop.signal })]),
  );
  const rbac = new RbacAuthorizer(mirrors);
  const listPods = async (ns: string) => (await catalog.get('', 'v1', 'pods')!.registry.list({ namespace: ns, filter: () => true })).items;
  // The Node authorizer's view of which pods are bound where (auth/node-authorizer.ts): memory first.
  const podMirror = new ResourceMirror({ served: catalog.get('', 'v1', 'pods')!, logger: log, stop: stop.signal });
  // A pod's binding and status updates start from the mirrored copy: one etcd round trip less each (registry.ts guaranteedUpdate).
  catalog.get('', 'v1', 'pods')!.registry.readCachedFrom((ns, name) => podMirror.get(ns, name));
  const authorizer = createAuthorizerChain([
    createNodeAuthorizer({
      listPods, cachedPods: (ns) => podMirror.inNamespace(ns),
      findObject: async (group, plural, ns, name) => catalog.get(group, 'v1', plural)?.registry.find(ns, name),
    }),
    (user, a) => rbac.authorize(user, a),
  ]);
  const ctx: ServerContext = {
    store: opts.store,
    logger: log,
    now: opts.now ?? Date.now,
    resource: (g, v, p) => catalog.get(g, v, p),
    resourceByKind: (apiVersion, kind) => catalog.byKind(apiVersion, kind),
    resourceByGroup: (g, p) => catalog.byGroup(g, p),
    catalog,
    shutdown: stop.signal,
    authenticateToken: (token) => authenticateBearer(token),
    nodeProxy: opts.nodeProxy ?? {},
    listeningOn: () => (server.listening ? (server.address() as AddressInfo) : undefined),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    authorizer,
    rbac,
    mirrorOf: (def) =>
      def.group === 'rbac.authorization.k8s.io' ? mirrorByPlural.get(def.plural) : def.group === '' ? lookupMirrors.get(def.plural) : def.group === 'admissionregistration.k8s.io' ? webhookMirrors.get(def.plural) : def.group === 'scheduling.k8s.io' && def.plural === 'priorityclasses' ? priorityClassMirror : undefined,
    // NodeRestriction reads a node's pod on every token request: memory first (mirror.ts findForCheck).
    lookupMirrorOf: (def) => (def.group === '' && def.plural === 'pods' ? podMirror : undefined),
    caPem: opts.caPem,
    nodeCredentialTtlMs: opts.nodeCredentialTtlMs,
    serviceAccountTokens: opts.serviceAccountTokens,
    serviceCidr: opts.serviceCidr,
    maxWatchBufferBytes: limits.maxWatchBufferBytes,
    watchEncoder: new WatchEventEncoder({ share: opts.watchEncodeCache ?? true }),
    ...(opts.tracer ? { journeys: new PodJourneys(opts.tracer) } : {}),
    ...(opts.podSecurity ? { podSecurity: opts.podSecurity } : {}),
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
  await ensureSystemPriorityClasses(ctx);
  await reconcileBootstrapPolicy(ctx, log.child({ component: 'rbac-bootstrap' }));
  await Promise.all([...mirrorByPlural.values(), ...lookupMirrors.values(), ...webhookMirrors.values(), priorityClassMirror, podMirror].map((m) => m.start()));
  const crds = startCrdController(ctx, catalog, log.child({ component: 'apiextensions' }));
  await crds.ready;

  let serverAddress = '127.0.0.1:6443';
  const inflight = new InflightLimiter(limits);
  const isMetricsPath = (pathname: string): boolean => !!opts.metrics && !!parseMetricsPath(pathname);
  // The request path (filters/chain.ts, docs/apiserver.md "The request path"). Upgrades (exec,
  // attach, portforward) are long-running: no timeout, no in-flight slot, no public paths.
  const recovery = recoveryFilter(log);
  const requestInfo = requestInfoFilter();
  const clientCertificates = !!(opts.tls && opts.caPem);
  const authentication = authenticationFilter({ clientCertificates, authenticateBearer });
  const auditor = opts.audit ? createAuditor(opts.audit, ctx, log) : undefined;
  const auditBegin = auditBeginFilter(auditor);
  const audit = auditFilter();
  const impersonation = impersonationFilter(authorizer);
  const authorization = authorizationFilter({ ctx, authorizer, logger: log, isMetricsPath });
  const requestChain: Filter[] = [
    recovery,
    requestInfo,
    ...(opts.console ? [consoleFilter(loadConsoleBundle(opts.console.dir), log)] : []),
    timeoutFilter({ timeoutMs: limits.requestTimeoutMs, logger: log }),
    publicPathsFilter({ ctx, serverJoinBundle: opts.serverJoinBundle }),
    auditBegin,
    authentication,
    audit,
    impersonation,
    maxInflightFilter(inflight),
    authorization,
  ];
  const upgradeChain: Filter[] = [recovery, requestInfo, auditBegin, authentication, audit, impersonation, authorization];

  /** The end of the request chain: non-resource paths, metrics.k8s.io, then the REST handlers. */
  async function serveRequest(r: ApiRequest): Promise<void> {
    const { req, res } = r;
    const url = r.url!;
    const user = r.user!;
    if (r.scope) return dispatch(r.scope);
    const method = req.method ?? 'GET';
    if (method === 'GET' || method === 'HEAD') {
      const allowed = r.nonResourceAllowed === true;
      if (serveOidcIfAllowed(allowed, user, res, url) || serveNonResourceIfAllowed(allowed, user, req, res, url)) return;
      if (isTracesPath(url.pathname)) {
        if (!allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
        return serveTraces(ctx.journeys, url.pathname, res);
      }
      if (url.pathname === IMAGE_CATALOGUE_PATH) {
        if (!allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
        return serveImageCatalogue(opts.imageCatalogue?.(), res);
      }
      if (url.pathname === ETCD_STATUS_PATH && opts.etcdStatus) {
        if (!allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
        const link = linkAbort(r.signal, 10_000);
        try {
          const body = JSON.stringify(await opts.etcdStatus(link.signal));
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(body);
        } finally {
          link.dispose();
        }
        return;
      }
    }
    const metricsRequest = opts.metrics ? parseMetricsPath(url.pathname) : undefined;
    if (metricsRequest) {
      await serveMetrics(ctx, opts.metrics!, metricsRequest, { method, url, user }, (u, a) => authorizeOrThrow(authorizer, u, a), res);
      return;
    }
    throw notFoundPath();
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
    return serveNonResource(req, res, url, serverAddress, servedDefs(), () => {
      if (!allowed) throw forbidden(forbiddenMessage(user, { verb: 'get', path: url.pathname }));
    });
  }

  /** The end of the upgrade chain: a watch over a WebSocket, or a pod stream spliced to the node's agent. */
  async function serveUpgrade(r: ApiRequest): Promise<void> {
    const scope = r.scope;
    const { socket, head } = r.upgrade!;
    if (scope && !scope.served.def.ephemeral && !scope.name && !scope.subresource && r.req.method === 'GET' && queryBool(r.url!.searchParams, 'watch')) return serveWatchUpgrade(scope, socket, head);
    if (scope?.subresource === 'proxy' && scope.name) return proxyUpgrade(scope, r.upgrade!.socket, r.upgrade!.head);
    if (!scope || scope.served.def.kind !== 'Pod' || !scope.subresource || !STREAM_SUBRESOURCES.has(scope.subresource) || !scope.name) throw notFoundPath();
    const upgrade = String(r.req.headers.upgrade ?? '').toLowerCase();
    if (upgrade !== 'websocket' && upgrade !== 'spdy/3.1') {
      throw new StatusError(400, 'BadRequest', `${scope.subresource} needs an upgrade to a WebSocket or to SPDY/3.1, not "${upgrade}"`);
    }
    // kubectl's port-forward tunnels SPDY in a WebSocket: unwrapped here; everything else is spliced to the agent.
    if (scope.subresource === 'portforward' && upgrade === 'websocket' && tunnelledProtocols(r.req).length > 0) await proxyPortForwardTunnel(scope, socket, head);
    else await proxyStreamUpgrade(scope, socket, head);
  }

  // Node's requestTimeout bounds receiving a request, not the reply, so watches are unaffected.
  // Client certificates are asked for but optional (tokens work without one); a certificate is
  // only believed when it verifies against the cluster CA (x509-authenticator.ts).
  const edge = edgeServerOptions(limits);
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ...(opts.caPem ? { ca: opts.caPem, requestCert: true, rejectUnauthorized: false } : {}), ...edge })
    : http.createServer(edge);
  hardenHttpServer(server);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void runChain(requestChain, serveRequest, new ApiRequest(req, res)));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node drops its own error listener from an upgraded socket: a reset while we authenticate
    // would otherwise be an uncaught 'error' event.
    socket.on('error', () => socket.destroy());
    void runChain(upgradeChain, serveUpgrade, new ApiRequest(req, new http.ServerResponse(req), { socket, head }));
  });
  const sockets = new Set<Socket>();
  server.on(opts.tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    // The certificate of the handshake is the connection's for good: its user is worked out once.
    if (clientCertificates) pinClientCertificate(s as TLSSocket);
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
        server.listen({ port, host, backlog: listenBacklog() }, () => resolve());
      });
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      serverAddress = `${h}:${addr.port}`;
      log.info({ address: serverAddress, tls: !!opts.tls }, 'API server listening');
      return { port: addr.port, url: `${opts.tls ? 'https' : 'http'}://${h === '0.0.0.0' ? '127.0.0.1' : h}:${addr.port}` };
    },
    inflight: () => inflight.inUse(),
    close() {
      closing ??= (async () => {
        stop.abort();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        catalog.close();
        // Give in-flight requests a moment, then cut what is left (watch sockets end on abort).
        const deadline = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 2000);
        await closed;
        clearTimeout(deadline);
        auditor?.close();
        await crds.done.catch(() => undefined); // its failure was logged where it ran; this only waits for it to end
      })();
      return closing;
    },
  };
}

async function ensureDefaultNamespaces(ctx: ServerContext): Promise<void> {
  const ns = ctx.resource('', 'v1', 'namespaces')!;
  for (const name of DEFAULT_NAMESPACES) {
    if (await ns.registry.find(undefined, name)) continue;
    const labels = DEFAULT_NAMESPACE_LABELS[name];
    const obj = admitCreate(ctx, ns.def, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels: { ...labels } } : {}) } });
    await ns.registry.create(obj).catch((err: unknown) => {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    });
  }
}
