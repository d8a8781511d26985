/**
 * Brings up the whole `nodelet server` in-process: PKI and admin credentials under the data dir,
 * the store, the API server, the read-only OCI registry, and the scheduler and controllers —
 * API clients like any other, each with its own least-privilege identity (in-process-identities.ts).
 *
 *   startControlPlane ─▶ ensurePki ─▶ [ensureToken] ─▶ openStore ─▶ createApiServer.listen
 *                     ─▶ certificate rotation ─▶ admin.kubeconfig ─▶ registry ─▶ metrics scraper ─▶ scheduler + controllers
 *                        (each while this server holds its kube-system Lease, with --leader-elect: leaderelection/)
 *   close()           ◀─ controllers, scheduler ◀─ metrics scraper ◀─ registry ◀─ rotation ◀─ API server (ends watches) ◀─ store
 */
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ApiClient, EventRecorder, writeKubeconfig, type ServerJoinBundle } from '@nodelet/api';
import { AgentError, noopLogger, systemClock, type Logger } from '@nodelet/base';
import { startRegistry, type Registry as OciRegistry } from '@nodelet/oci';
import { CONTROLLER_NAMES, startControllerManager, type ControllerManagerHandle, type ControllerName } from './controllers/index.js';
import type { KeyPairPem } from './pki/certs.js';
import { hostAddresses, ensurePki, type EnsurePkiOptions } from './pki/pki.js';
import { startCertRotation } from './pki/rotation.js';
import { adminKubeconfig, ensureToken } from './pki/kubeconfig.js';
import { startScheduler, type SchedulerHandle } from './scheduler/index.js';
import { startSnapshotSchedule } from './storage/snapshot/snapshot-schedule.js';
import type { DefragSchedule } from './storage/etcd/etcd-defragmenter.js';
import { saveStoreSnapshot } from './storage/snapshot/save.js';
import { pruneSnapshots } from './storage/snapshot/snapshots.js';
import { runElected } from './leaderelection/elected-component.js';
import { leaderIdentity as newLeaderIdentity, type LeaderElectorOptions } from './leaderelection/leader-elector.js';
import { etcdAlarms, etcdMemberStatuses, loadEtcdTls, openStore, parseDatastoreEndpoint, type EtcdTlsFiles } from './storage/index.js';
import type { Store } from './storage/types.js';
import { customTransformer, loadEncryptionConfig, transformersByPrefix, type EncryptionRule } from './storage/encryption/config.js';
import { createEncryptingStore } from './storage/encryption/encrypting-store.js';
import type { ValueTransformer } from './storage/encryption/providers.js';
import { RESOURCE_DEFS } from './apiserver/resources.js';
import { storagePrefix } from './apiserver/resource.js';
import { createTokenAuthenticator } from './apiserver/auth/authenticator.js';
import { ADMIN_GROUP } from './apiserver/auth/types.js';
import { createInProcessIdentities, type InProcessIdentities } from './apiserver/auth/in-process-identities.js';
import { ensureServiceAccountKey } from './apiserver/auth/serviceaccount/signing-key.js';
import { ServiceAccountTokens } from './apiserver/auth/serviceaccount/tokens.js';
import type { ApiObject } from './apiserver/object.js';
import { DEFAULT_SERVICE_CIDR, firstServiceIp } from './apiserver/handlers/service-ip.js';
import { keepKubernetesService } from './apiserver/kubernetes-service.js';
import type { ApiServerLimits } from './apiserver/limits.js';
import { createApiServer, type ApiServer } from './apiserver/server.js';
import { defaultConsoleDir } from './apiserver/console.js';
import type { PodSecurityConfig } from './apiserver/admission/pod-security/config.js';
import type { AuditLogConfig } from './apiserver/audit/index.js';
import { JourneyTracer } from '@nodelet/api/tracing';
import { MetricsStore } from './metrics/metrics-store.js';
import { MetricsScraper } from './metrics/scraper.js';

export interface ControlPlaneOptions {
  dataDir: string;
  /** `sqlite://…`, `etcd://host:port`, `https://host:port` (default SQLite in the data dir). */
  datastoreEndpoint?: string;
  /** `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`: TLS to etcd (storage/etcd/etcd-tls.ts). */
  etcdTls?: EtcdTlsFiles;
  /** `--encryption-provider-config`: an EncryptionConfiguration file; the resources it names are encrypted at rest (storage/encryption/). */
  encryptionProviderConfig?: string;
  /**
   * `--snapshot-schedule-cron` and friends: snapshots of the store on a cron schedule, pruned to
   * `retention`, taken by the one server that holds the `nodelet-snapshot` Lease (docs/backup.md).
   * Default off for an embedded control plane; `nodelet server` turns it on (every 12 h).
   */
  snapshots?: { cron: string; retention: number; dir: string; server?: string; /** Tests: a six-field (seconds) schedule. */ allowSeconds?: boolean };
  /** `--etcd-defrag-schedule-cron` or `--etcd-defrag-interval`: defragment the etcd members (one at a time) on it; default off. */
  etcdDefrag?: DefragSchedule;
  bindAddress?: string;
  port?: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** `host:port` of the OCI registry; '' disables it. */
  registryAddress?: string;
  /** OCI image store the registry serves. */
  registryRoot?: string;
  clusterCidr?: string;
  /** `--cluster-dns`: ClusterIP of kube-system/kube-dns (default: the service range's 10th address). */
  clusterDns?: string;
  logger?: Logger;
  /** Use this store instead of opening one (tests); it is not closed by close(). */
  store?: Store;
  /**
   * Start the scheduler and controllers (default true). A list starts only those controllers and
   * no scheduler — e.g. NAMESPACE_SETUP_CONTROLLERS for an API server whose new namespaces still
   * get their default service account and root CA (what pods need to be admitted and run).
   */
  controllers?: boolean | readonly ControllerName[];
  /**
   * kube-apiserver's --kubelet-certificate-authority: a PEM file with the CA(s) agents' serving
   * certificates are verified against on pods/log and pods/exec. Default: the cluster CA, which
   * signs the certificates agents get through their kubelet-serving CSR.
   */
  kubeletCertificateAuthority?: string;
  /** With the default set (scheduler and every controller): leave these controllers out (`--controllers=*,-cronjob`). */
  disableControllers?: readonly ControllerName[];
  /** Node lifecycle: silence before a node goes Unknown (default 50 s). */
  nodeMonitorGracePeriodMs?: number;
  /** Addresses for LoadBalancer Services (`--service-lb-pool`); default: the nodes' InternalIPs. */
  serviceLbPool?: string;
  /** Lifetime of node credentials (default one year); agents renew at 70–90 % of it. */
  nodeCredentialTtlMs?: number;
  /** Service ClusterIP range (default 10.96.0.0/16); its first address is the `kubernetes` Service. */
  serviceCidr?: string;
  /** The address pods reach the API server at (default: the bind address, else the first non-loopback IPv4). */
  advertiseAddress?: string;
  /** Service-account token issuer (default https://kubernetes.default.svc.cluster.local) and accepted audiences (default [issuer]). */
  serviceAccountIssuer?: string;
  apiAudiences?: string[];
  /** kube-controller-manager's --cluster-signing-duration: the longest certificate the CSR signer issues (default one year; tests shorten it). */
  clusterSigningDurationMs?: number;
  /**
   * Certificate rotation (pki/rotation.ts): how often to check (default 1 h) and how long before
   * expiry to re-issue (default 30 days). Tests shorten both.
   */
  certRotation?: { intervalMs?: number; renewBeforeMs?: number };
  /** API server bounds: in-flight requests, request timeout, … (defaults as kube-apiserver). */
  limits?: Partial<ApiServerLimits>;
  /**
   * The built-in metrics-server (metrics/scraper.ts) and the `metrics.k8s.io` API it feeds
   * (default on); `resolutionMs` is how often it scrapes the nodes (default 15 s).
   */
  metrics?: false | { resolutionMs?: number };
  /**
   * `--tracing-endpoint`: OTLP/HTTP collector the pod journey spans of the API server and the
   * scheduler are exported to (docs/tracing.md). Unset: they are only kept in memory and served at
   * /debug/nodelet/traces/.
   */
  tracingEndpoint?: string;
  /**
   * Run the scheduler and controller manager only while this server holds their Leases
   * (`kube-system/kube-scheduler`, `kube-system/kube-controller-manager`), so several servers
   * on one etcd act one at a time (leaderelection/, docs/ha.md). Default: on for an etcd
   * datastore, off for SQLite (one server per SQLite file: nobody to elect against).
   */
  leaderElect?: boolean;
  /** Audit policy and log (`--audit-*` flags, apiserver/audit/); unset: no audit log. */
  audit?: AuditLogConfig;
  /** Leader election timings (tests); default kube's 15 s lease, 10 s renew deadline, 2 s retry. */
  leaderElection?: Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;
  /**
   * Also accept a static admin bearer token kept in `<data-dir>/admin.token` (default true), for
   * callers that embed the control plane in their process — tests and benches, which share it
   * between the servers they start. `nodelet server` turns it off: its admin credential is the
   * client certificate in admin.kubeconfig (docs/security.md), and a leftover admin.token is removed.
   */
  staticAdminToken?: boolean;
  /** PodSecurity admission defaults and exemptions (`--admission-control-config-file`, loadAdmissionConfiguration); unset: privileged everywhere. */
  podSecurity?: PodSecurityConfig;
  /** Serve the web console at /ui/ (`--ui`, docs/console.md) from `dir` (default: build/console of this checkout); unset: none. */
  console?: { dir?: string };
  now?: () => number;
}

/** kubeadm's default issuer: what in-cluster clients and OIDC verifiers see in `iss`. */
/** The names pods use for the API server (the default/kubernetes Service, cluster domain cluster.local). */
export const KUBERNETES_SERVICE_NAMES = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface ControlPlane {
  url: string;
  port: number;
  /** The static admin token ('' with `staticAdminToken: false`). */
  adminToken: string;
  kubeconfigPath: string;
  caPem: string;
  store: Store;
  apiServer: ApiServer;
  registry?: OciRegistry;
  /** The in-process components' credentials (for tests that start the controllers themselves). */
  inProcessIdentities: InProcessIdentities;
  /** The control plane's pod journey tracer (for tests that start the scheduler themselves). */
  tracer: JourneyTracer;
  /** This server's holderIdentity in the leader Leases (`<hostname>_<uuid>`). */
  leaderIdentity: string;
  close(): Promise<void>;
}

export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const log = o.logger ?? noopLogger;
  const cleanups: Array<() => Promise<void>> = [];
  const undo = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'Shutdown step failed'));
  };
  try {
    await mkdir(o.dataDir, { recursive: true, mode: 0o700 });
    const bind = o.bindAddress ?? '0.0.0.0';
    const serviceCidr = o.serviceCidr ?? DEFAULT_SERVICE_CIDR;
    const pkiOptions: EnsurePkiOptions = {
      dir: join(o.dataDir, 'pki'),
      // Pods reach the server as the `kubernetes` Service (its IP, or kubernetes.default.svc
      // through DNS) and verify it with kube-root-ca.crt: the serving certificate names both, as
      // kube-apiserver's does. A certificate missing a name is re-issued at start.
      extraIps: [...(bind !== '0.0.0.0' && bind !== '::' ? [bind] : []), ...(o.advertiseAddress ? [o.advertiseAddress] : []), firstServiceIp(serviceCidr)],
      extraDnsNames: KUBERNETES_SERVICE_NAMES,
      ...(o.now ? { now: o.now } : {}),
      ...(o.certRotation?.renewBeforeMs !== undefined ? { renewBeforeMs: o.certRotation.renewBeforeMs } : {}),
      logger: log.child({ component: 'pki' }),
    };
    const pki = await ensurePki(pkiOptions);
    const servingFiles =
      o.tlsCertFile && o.tlsPrivateKeyFile
        ? { certFile: o.tlsCertFile, keyFile: o.tlsPrivateKeyFile, loaded: { certPem: await readFile(o.tlsCertFile, 'utf8'), keyPem: await readFile(o.tlsPrivateKeyFile, 'utf8') } }
        : undefined;
    // The chain includes the CA so `nodelet join` can pin it by hash before sending a token.
    const servingTls = (pair: KeyPairPem): { cert: string; key: string } =>
      servingFiles ? { cert: pair.certPem, key: pair.keyPem } : { cert: pair.certPem.trimEnd() + '\n' + pki.caPem, key: pair.keyPem };
    const tls = servingTls(servingFiles?.loaded ?? pki.serving);
    // The node proxy reads these fields on every connection to an agent; rotation replaces both
    // in one synchronous step, so no connection sees a new certificate with the old key.
    const nodeProxy = { clientCert: pki.agentClient.certPem, clientKey: pki.agentClient.keyPem, ca: await kubeletCa(o.kubeletCertificateAuthority, pki.caPem) };
    const adminTokenFile = join(o.dataDir, 'admin.token');
    let adminToken = '';
    if (o.staticAdminToken !== false) adminToken = await ensureToken(adminTokenFile);
    else if (existsSync(adminTokenFile)) {
      // The admin kubeconfig of earlier versions held this token: removing it revokes it.
      await rm(adminTokenFile, { force: true });
      log.info({ file: adminTokenFile }, 'Removed the static admin token; admin.kubeconfig now holds a client certificate');
    }
    // Read before the store opens: a bad file stops the start before anything is written.
    const encryption = o.encryptionProviderConfig ? await loadEncryptionAtRest(o.encryptionProviderConfig, log.child({ component: 'storage' })) : undefined;
    const rawStore = o.store ?? openStore(o.datastoreEndpoint, { dataDir: o.dataDir, logger: log.child({ component: 'storage' }), etcdTls: o.etcdTls, etcdDefrag: o.etcdDefrag });
    if (!o.store) cleanups.push(() => rawStore.close());
    const store = encryption ? createEncryptingStore(rawStore, encryption.byPrefix, customTransformer(encryption.rules)) : rawStore;
    const now = o.now ?? Date.now;
    const onEtcd = parseDatastoreEndpoint(o.datastoreEndpoint, o.dataDir, o.etcdTls).kind === 'etcd';
    const leaderElect = o.leaderElect ?? (!o.store && onEtcd);
    const leaderIdentity = newLeaderIdentity();
    const ref: { server?: ApiServer } = {};
    const identities = createInProcessIdentities();
    const authenticator = createTokenAuthenticator({
      staticTokens: new Map([...(adminToken ? [[adminToken, { name: 'system:admin', groups: [ADMIN_GROUP, 'system:authenticated'] }] as const] : []), ...identities.tokens]),
      getSecret: (name) => ref.server!.context.resource('', 'v1', 'secrets')!.registry.find('kube-system', name),
      now,
    });
    const saKey = await ensureServiceAccountKey(pkiOptions.dir);
    const issuer = o.serviceAccountIssuer ?? DEFAULT_SERVICE_ACCOUNT_ISSUER;
    const serviceAccountTokens = new ServiceAccountTokens({ issuer, audiences: o.apiAudiences?.length ? o.apiAudiences : [issuer], key: saKey });
    const metricsStore = o.metrics === false ? undefined : new MetricsStore();
    const tracer = new JourneyTracer({ service: 'nodelet-server', endpoint: o.tracingEndpoint, logger: log.child({ component: 'tracing' }) });
    cleanups.push(() => tracer.close());
    const datastore = o.store ? undefined : parseDatastoreEndpoint(o.datastoreEndpoint, o.dataDir, o.etcdTls);
    const etcdTarget = datastore?.kind === 'etcd' ? { endpoints: datastore.endpoints, ...(datastore.tls ? { tls: loadEtcdTls(o.etcdTls ?? {}) } : {}) } : undefined;
    let registry: OciRegistry | undefined;
    const regRoot = o.registryRoot ?? join(process.cwd(), 'build', 'images');
    const apiServer = await createApiServer({
      store,
      ...(onEtcd ? { serverJoinBundle: () => serverJoinBundle(pkiOptions.dir, o.datastoreEndpoint!, o.etcdTls) } : {}),
      ...(etcdTarget ? { etcdStatus: async () => ({ members: await etcdMemberStatuses(etcdTarget), alarms: await etcdAlarms(etcdTarget).catch((err: unknown) => ({ error: (err as Error).message })) }) } : {}),
      authenticator,
      logger: log.child({ component: 'apiserver' }),
      tls,
      caPem: pki.caPem,
      nodeProxy,
      now,
      ...(o.clusterDns ? { clusterDnsIP: o.clusterDns } : {}),
      ...(o.nodeCredentialTtlMs ? { nodeCredentialTtlMs: o.nodeCredentialTtlMs } : {}),
      serviceAccountTokens,
      serviceCidr,
      ...(o.limits ? { limits: o.limits } : {}),
      ...(metricsStore ? { metrics: metricsStore } : {}),
      tracer,
      ...(o.podSecurity ? { podSecurity: o.podSecurity } : {}),
      ...(o.console ? { console: { dir: o.console.dir ?? defaultConsoleDir() } } : {}),
      ...(o.audit ? { audit: o.audit } : {}),
      // The registry starts below, once the server listens: read when asked.
      imageCatalogue: () => (registry ? { registry: registry.hostPort, root: regRoot } : undefined),
    });
    ref.server = apiServer;
    cleanups.push(() => apiServer.close());
    const { port } = await apiServer.listen({ port: o.port ?? 6443, host: bind });
    const stopKubernetesService = new AbortController();
    const advertiseAddress = o.advertiseAddress ?? (bind !== '0.0.0.0' && bind !== '::' ? bind : (hostAddresses().find((a) => !a.startsWith('127.') && !a.includes(':')) ?? '127.0.0.1'));
    const kubernetesService = keepKubernetesService(apiServer.context, {
      advertiseAddress, port, serviceIp: firstServiceIp(serviceCidr), log: log.child({ component: 'kubernetes-service' }),
    }, stopKubernetesService.signal);
    cleanups.push(async () => {
      stopKubernetesService.abort();
      await kubernetesService;
    });
    const host = bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind.includes(':') ? `[${bind}]` : bind;
    const url = `https://${host}:${port}`;
    const kubeconfigPath = join(o.dataDir, 'admin.kubeconfig');
    const rotation = startCertRotation({
      pki: pkiOptions,
      current: pki,
      ...(servingFiles ? { servingFiles } : {}),
      ...(o.certRotation?.intervalMs !== undefined ? { intervalMs: o.certRotation.intervalMs } : {}),
      logger: log.child({ component: 'pki' }),
      onServing: (pair) => apiServer.setServingCertificate(servingTls(pair)),
      onAgentClient: (pair) => Object.assign(nodeProxy, { clientCert: pair.certPem, clientKey: pair.keyPem }),
      onAdmin: (pair) => writeKubeconfig(kubeconfigPath, adminKubeconfig(url, pki.caPem, pair)),
    });
    cleanups.push(() => rotation.close());
    // A client certificate of the cluster CA: every server sharing the CA accepts it (docs/ha.md).
    await writeKubeconfig(kubeconfigPath, adminKubeconfig(url, pki.caPem, pki.admin));

    const regAddr = o.registryAddress ?? '127.0.0.1:5000';
    if (regAddr && existsSync(regRoot)) {
      const i = regAddr.lastIndexOf(':');
      registry = await startRegistry({ root: regRoot, host: regAddr.slice(0, i) || '127.0.0.1', port: Number(regAddr.slice(i + 1)), logger: log });
      cleanups.push(() => registry!.close());
    } else if (regAddr) {
      log.warn({ root: regRoot }, 'Image store missing; registry not started (run: nodelet image build)');
    }

    if (metricsStore) {
      const stopScraper = new AbortController();
      const client = new ApiClient({ server: url, token: identities.metricsServer, ca: pki.caPem, userAgent: 'nodelet-server/metrics-server' });
      const scraper = new MetricsScraper({
        client, token: identities.metricsServer, agentCa: () => nodeProxy.ca, store: metricsStore, clock: systemClock,
        log: log.child({ component: 'metrics-server' }), resolutionMs: o.metrics ? o.metrics.resolutionMs : undefined,
      });
      const scraping = scraper.run(stopScraper.signal);
      cleanups.push(async () => {
        stopScraper.abort();
        await scraping;
        client.close();
      });
    }

    if (o.snapshots && datastore) {
      const snap = o.snapshots;
      const ds = datastore;
      const server = snap.server ?? hostname();
      const client = new ApiClient({ server: url, token: identities.controllerManager, ca: pki.caPem, userAgent: 'nodelet-server/snapshot' });
      const slog = log.child({ component: 'snapshot' });
      const events = new EventRecorder({ client, component: 'nodelet-snapshot', logger: slog });
      const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: SNAPSHOT_LEASE, namespace: 'kube-system' } };
      const startSchedule = async (): Promise<{ close(): Promise<void> }> => startSnapshotSchedule({
        cron: snap.cron, log: slog, ...(snap.allowSeconds ? { allowSeconds: true } : {}),
        take: () => saveStoreSnapshot(ds, o.etcdTls, snap.dir, server),
        prune: () => pruneSnapshots(snap.dir, { retention: snap.retention, server }),
        onFailure: (err) => events.record(lease, 'Warning', 'SnapshotFailed', `scheduled snapshot on ${server} failed: ${(err as Error).message}`),
      });
      // With several servers one takes each tick: the holder of the nodelet-snapshot Lease.
      const running = leaderElect
        ? runElected({ lease: SNAPSHOT_LEASE, client, identity: leaderIdentity, clock: systemClock, log: slog, ...(o.leaderElection ? { timings: o.leaderElection } : {}) }, startSchedule)
        : await startSchedule();
      cleanups.push(async () => {
        await running.close();
        events.close();
        client.close();
      });
    }

    if (o.controllers !== false && !(Array.isArray(o.controllers) && o.controllers.length === 0)) {
      const stopControllers = new AbortController();
      const clients: ApiClient[] = [];
      const clientAs = (token: string, userAgent: string): ApiClient => {
        const c = new ApiClient({ server: url, token, ca: pki.caPem, userAgent, protobuf: true });
        clients.push(c);
        return c;
      };
      const only = Array.isArray(o.controllers) ? (o.controllers as readonly ControllerName[]) : undefined;
      const enabled = only ?? (o.disableControllers?.length ? CONTROLLER_NAMES.filter((n) => !o.disableControllers!.includes(n)) : undefined);
      // Per-controller clients are made once: an elected manager may start many times.
      const controllerClients = new Map<string, ApiClient>();
      const schedulerClient = clientAs(identities.scheduler, 'nodelet-server/scheduler');
      const managerClient = clientAs(identities.controllerManager, 'nodelet-server/controller-manager');
      const startSchedulerNow = (signal: AbortSignal): Promise<SchedulerHandle> =>
        startScheduler({ client: schedulerClient, logger: log.child({ component: 'scheduler' }), signal, tracer });
      const startManagerNow = (signal: AbortSignal): Promise<ControllerManagerHandle> => startControllerManager({
        client: managerClient,
        clientFor: (account: string) => {
          let c = controllerClients.get(account);
          if (!c) controllerClients.set(account, (c = clientAs(identities.controller(account), `nodelet-server/${account}`)));
          return c;
        },
        logger: log.child({ component: 'controller-manager' }),
        signal,
        ...(enabled ? { controllers: enabled } : {}),
        ...(o.clusterCidr ? { clusterCidr: o.clusterCidr } : {}),
        ...(o.nodeMonitorGracePeriodMs ? { nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriodMs } : {}),
        ...(o.serviceLbPool ? { serviceLbPool: o.serviceLbPool } : {}),
        csrSigning: {
          caCertFile: join(pkiOptions.dir, 'ca.crt'), caKeyFile: join(pkiOptions.dir, 'ca.key'),
          ...(o.clusterSigningDurationMs ? { durationMs: o.clusterSigningDurationMs } : {}),
        },
        rootCaPem: pki.caPem,
        legacyTokenSigner: (t) => serviceAccountTokens.issueLegacy({ sa: t.sa as ApiObject, secretName: t.secretName }),
      });
      const running: Array<{ close(): Promise<void> }> = [];
      if (leaderElect) {
        // Each component campaigns with its own credentials (RBAC gives each only its lease).
        const elect = { identity: leaderIdentity, clock: systemClock, log: log.child({ component: 'leader-election' }), ...(o.leaderElection ? { timings: o.leaderElection } : {}) };
        if (!only) running.push(runElected({ ...elect, lease: 'kube-scheduler', client: schedulerClient }, startSchedulerNow));
        running.push(runElected({ ...elect, lease: 'kube-controller-manager', client: managerClient }, startManagerNow));
      } else {
        if (!only) running.push(await startSchedulerNow(stopControllers.signal));
        running.push(await startManagerNow(stopControllers.signal));
      }
      cleanups.push(async () => {
        stopControllers.abort();
        await Promise.all(running.map((r) => r.close()));
        for (const c of clients) c.close();
      });
    }
    let closing: Promise<void> | undefined;
    return { url, port, adminToken, kubeconfigPath, caPem: pki.caPem, store, apiServer, registry, inProcessIdentities: identities, tracer, leaderIdentity, close: () => (closing ??= undo()) };
  } catch (err) {
    await undo();
    throw err;
  }
}

/** What a joining server gets (apiserver/server-join.ts): read at each request, so rotated files are served. */
/** The Lease whose holder takes the scheduled snapshots (kube-system). */
export const SNAPSHOT_LEASE = 'nodelet-snapshot';

async function serverJoinBundle(pkiDir: string, datastoreEndpoint: string, etcdTls: EtcdTlsFiles | undefined): Promise<ServerJoinBundle> {
  const read = (f: string): Promise<string> => readFile(f, 'utf8');
  const etcd = {
    ...(etcdTls?.caFile ? { ca: await read(etcdTls.caFile) } : {}),
    ...(etcdTls?.certFile ? { cert: await read(etcdTls.certFile) } : {}),
    ...(etcdTls?.keyFile ? { key: await read(etcdTls.keyFile) } : {}),
  };
  return {
    caCert: await read(join(pkiDir, 'ca.crt')),
    caKey: await read(join(pkiDir, 'ca.key')),
    serviceAccountKey: await read(join(pkiDir, 'sa.key')),
    datastoreEndpoint,
    ...(Object.keys(etcd).length ? { etcd } : {}),
  };
}

/** The rules of an EncryptionConfiguration file and the transformer of each built-in resource's key prefix. */
async function loadEncryptionAtRest(path: string, log: Logger): Promise<{ rules: EncryptionRule[]; byPrefix: Map<string, ValueTransformer> }> {
  const rules = await loadEncryptionConfig(path, log);
  const stored = RESOURCE_DEFS.filter((d) => !d.ephemeral).map((d) => ({ group: d.group, plural: d.plural, prefix: storagePrefix(d) }));
  const byPrefix = transformersByPrefix(rules, stored, path);
  log.info({ path, prefixes: [...byPrefix.keys()], providers: rules.map((r) => r.providers) }, 'Encryption at rest configured');
  return { rules, byPrefix };
}

/** The CA bundle agents are verified against: the --kubelet-certificate-authority file, else the cluster CA. */
async function kubeletCa(file: string | undefined, clusterCa: string): Promise<string> {
  if (!file) return clusterCa;
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `--kubelet-certificate-authority: cannot read "${file}"`, { cause: err });
  }
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `--kubelet-certificate-authority: "${file}" holds no PEM certificate`, { cause: err });
  }
  return pem;
}
