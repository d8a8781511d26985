/**
 * The agent: wires the runtime (CRI + CNI service), the PLEG, pod workers, status manager, event
 * recorder, pod sources, node reporter, lease, node API and housekeeping, and owns their lifetime.
 *
 *   start():  CRI handshake → CNI service → first relist (recovery view) → node API → loops
 *   close():  stop sources and loops (one AbortController), drain workers, flush nothing more,
 *             close servers, CNI service and CRI channel. Idempotent. Running pods keep running.
 *
 * Crash-only: nothing is persisted by the agent but its credentials (certificates/: the serving
 * pair and the renewed node token, each written atomically); a restarted agent rebuilds its view
 * from CRI labels and the API, and does not restart running containers.
 */
import { chmod, mkdir } from 'node:fs/promises';
import cron from 'node-cron';
import { DisposableStore, describeError, systemClock, toDisposable, type Clock, type Logger } from '@nodelet/base';
import { CONFIGMAPS, SECRETS, type ApiClient, type Pod } from '@nodelet/api';
import { connectCriClient, type CriClient } from '@nodelet/cri-client';
import { installNodeletCni, startCniService, type CniService } from '@nodelet/cni';
import type { AgentConfig } from './config/config.js';
import { Pleg } from './pleg/pleg.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { ImageManager } from './runtime/image-manager.js';
import type { EnvSourceReader } from './runtime/env.js';
import { hostMounter } from './runtime/mount.js';
import { cleanupOrphanedPodDirs } from './runtime/volumes.js';
import { apiVolumeSources } from './source/volume-sources.js';
import { StatusManager } from './status/status-manager.js';
import { EventRecorder } from './status/event-recorder.js';
import { PodWorkers } from './podworkers/pod-workers.js';
import { PodLifecycle } from './pod-lifecycle.js';
import { ProbeManager } from './prober/prober.js';
import { ApiPodSource } from './source/pod-source.js';
import { isMirrorPod, readStaticPods } from './source/static-pods.js';
import { NodeReporter } from './node/node-reporter.js';
import { NodeLease } from './node/lease.js';
import { pickInternalIP } from './node/machine-info.js';
import type { RuntimeHealth } from './node/node-status.js';
import { AgentMetrics } from './server/metrics.js';
import { startNodeApi, type NodeApiServer } from './server/node-api.js';
import { NodeApiAuthenticator } from './server/authn.js';
import { NodeApiAuthorizer } from './server/authz.js';
import { TokenManager } from './runtime/token-manager.js';
import { ServiceLister } from './source/service-lister.js';
import { RuntimeClassManager } from './source/runtime-classes.js';
import { nodeCredentialRotation, servingCertificate, type NodeCertificatesOptions } from './certificates/node-certificates.js';
import type { ServingCertManager } from './certificates/serving-cert-manager.js';
import type { NodeCredentialManager } from './certificates/node-credential-manager.js';
import { collectContainers, collectImages, serialJob } from './housekeeping.js';
import { podLogDir } from './runtime/container-config.js';
import { startServiceProxy, type ServiceProxy } from './proxy/index.js';
import { podDnsConfigurer, startClusterDns, type NodeDns } from './dns/index.js';
import { join } from 'node:path';

export const AGENT_VERSION = 'v1.32.0-nodelet';

export interface AgentOptions {
  config: AgentConfig;
  api: ApiClient;
  log: Logger;
  clock?: Clock;
  /** Jitter of the certificate rotation deadlines (default Math.random). */
  random?: () => number;
  /** The kubeconfig `api` was made from: a rotated node credential is written where it takes its token. */
  kubeconfigPath?: string;
  /** How long to wait for the runtime at start (kubelet: 30 s). */
  runtimeWaitMs?: number;
  /** PLEG period (1 s). */
  relistPeriodMs?: number;
  /** Orphan cleanup and known-pods sync (kubelet housekeeping, 2 s). */
  housekeepingMs?: number;
}

export class Agent {
  readonly config: AgentConfig;
  readonly metrics: AgentMetrics;
  readonly #o: AgentOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  readonly #store = new DisposableStore();
  readonly #loops: Promise<unknown>[] = [];
  #cri!: CriClient;
  #cni?: CniService;
  #nodeApi?: NodeApiServer;
  #dns?: NodeDns;
  /** Long-lived helpers closed after the loops (informers the runtime reads). */
  readonly #closers: Array<() => Promise<unknown>> = [];
  /** The service proxy (docs/services.md); undefined with proxy mode none. */
  proxy?: ServiceProxy;
  #closed?: Promise<void>;
  #runtimeName = 'containerd';
  #runtimeVersion = '';
  pleg!: Pleg;
  workers!: PodWorkers;
  status!: StatusManager;
  events!: EventRecorder;
  node!: NodeReporter;
  lease!: NodeLease;
  /** The serving certificate's CSR flow and rotation (unset with tlsCertFile or serverTLSBootstrap off). */
  servingCertificates?: ServingCertManager;
  /** Node credential renewal (unset when off or when the kubeconfig holds no node token). */
  nodeCredentials?: NodeCredentialManager;
  readonly apiPods = new Map<string, Pod>();
  readonly staticPods = new Map<string, Pod>();
  #staticRead = false;
  #source!: ApiPodSource;
  #podDirCleanup?: () => void;
  #internalIP: string;

  private constructor(o: AgentOptions) {
    this.#o = o;
    this.config = o.config;
    this.#log = o.log;
    this.#clock = o.clock ?? systemClock;
    this.metrics = new AgentMetrics(o.config.nodeName);
    this.#internalIP = pickInternalIP(o.config.nodeIP);
  }

  static async start(o: AgentOptions): Promise<Agent> {
    const a = new Agent(o);
    try {
      await a.#start();
      return a;
    } catch (err) {
      await a.close().catch(() => undefined);
      throw err;
    }
  }

  get nodeApiPort(): number | undefined {
    return this.#nodeApi?.port;
  }

  get healthzPort(): number | undefined {
    return this.#nodeApi?.healthzPort;
  }

  get cri(): CriClient {
    return this.#cri;
  }

  /** Where the node-local cluster DNS resolver answers (the proxy's `localDNS`); unset when it is not running. */
  get localDns(): { ip: string; port: number } | undefined {
    return this.#dns?.address;
  }

  async #start(): Promise<void> {
    const c = this.config;
    const log = this.#log;
    const signal = this.#stop.signal;
    // Pod directories hold secret volumes: nobody but root walks into them on the node (kubelet: 0750).
    await mkdir(join(c.rootDir, 'pods'), { recursive: true });
    await chmod(join(c.rootDir, 'pods'), 0o750);

    // 1. Runtime: Version handshake, waiting for it like the kubelet.
    const { client, version } = await connectCriClient({ endpoint: c.containerRuntimeEndpoint, waitMs: this.#o.runtimeWaitMs ?? 30_000 });
    this.#cri = client;
    this.#store.add(toDisposable(() => client.close()));
    this.#runtimeName = version.runtimeName || 'containerd';
    this.#runtimeVersion = version.runtimeVersion;
    log.info({ runtime: this.#runtimeName, version: this.#runtimeVersion, endpoint: c.containerRuntimeEndpoint }, 'Container runtime connected');

    // 2. Pod networking: the CNI service the runtime's nodelet-cni plugin forwards to.
    await installNodeletCni(c.cniBinDir, { pluginDirs: c.cniPluginDirs });
    this.#cni = await startCniService({
      socketPath: c.cniSocketPath,
      binDirs: c.cniPluginDirs,
      cacheDir: c.cniCacheDir,
      chain: { podCIDR: c.podCIDR, bridgeName: c.cniBridgeName, ipamDataDir: c.cniIpamDataDir, hairpin: true },
      runtimeConfDir: c.cniConfDir,
      logger: log,
    });

    // 2b. Cluster DNS: the node-local resolver (docs/dns.md). It starts first so the proxy can
    // send the kube-dns Service IP to it; a resolver that could not bind leaves kube-dns to its endpoints.
    const api = this.#o.api;
    this.#dns = await startClusterDns({ api, config: c, nodeIP: this.#internalIP, registry: this.metrics.registry, clock: this.#clock, log: log.child({ component: 'dns' }) });

    // 2c. Service proxy: its table (rejecting the whole service CIDR) is in place before any pod runs.
    const proxyConfig = { ...c.proxy, localDNS: c.proxy.localDNS ?? this.#dns?.address };
    this.proxy = await startServiceProxy({ api, nodeName: c.nodeName, config: proxyConfig, log: log.child({ component: 'proxy' }), registry: this.metrics.registry });

    // 3. Core: PLEG cache, runtime, status, events, workers.
    this.pleg = new Pleg({
      runtime: client.runtime,
      clock: this.#clock,
      log: log.child({ component: 'pleg' }),
      periodMs: this.#o.relistPeriodMs,
      onPodChanged: (uid) => this.workers?.wake(uid),
      observeRelist: (s) => this.metrics.plegRelistDuration.observe(s),
    });
    this.node = new NodeReporter({
      api,
      config: c,
      clock: this.#clock,
      log: log.child({ component: 'node' }),
      internalIP: this.#internalIP,
      agentVersion: AGENT_VERSION,
      nodeApiPort: () => this.#nodeApi?.port ?? c.port,
      health: (s) => this.#health(s),
      onPodCIDR: (cidr) => {
        log.info({ podCIDR: cidr }, 'Pod CIDR set');
        this.#cni?.setPodCIDR(cidr);
        this.node.poke();
      },
    });
    const machine = await this.node.machineInfo();
    this.events = new EventRecorder({ api, clock: this.#clock, log: log.child({ component: 'events' }), nodeName: c.nodeName });
    const dnsConfigurer = podDnsConfigurer({ config: c, nodeIP: this.#internalIP, events: this.events, log: log.child({ component: 'dns' }) });
    const runtime = new PodRuntime({
      runtime: client.runtime,
      images: new ImageManager({ images: client.image, clock: this.#clock, maxParallelPulls: c.maxParallelImagePulls }),
      env: this.#envReader(),
      volumeSources: apiVolumeSources(api),
      mounter: hostMounter,
      tokens: new TokenManager({ api, clock: this.#clock }),
      services: this.#serviceLister(api, log),
      events: this.events,
      clock: this.#clock,
      log: log.child({ component: 'runtime' }),
      paths: { rootDir: c.rootDir, podLogsDir: c.podLogsDir },
      nodeName: c.nodeName,
      hostIP: () => this.#internalIP,
      nodeMemoryBytes: machine.memoryBytes,
      runtimeRequestTimeoutMs: c.runtimeRequestTimeoutMs,
      crashLoopInitialMs: c.crashLoopInitialMs,
      crashLoopMaxMs: c.crashLoopMaxMs,
      onSandboxIps: (id, ips) => this.pleg.noteSandboxIps(id, ips),
      podDns: (pod, s) => dnsConfigurer.forPod(pod, s),
      runtimeHandler: this.#runtimeClasses(api, log),
    });
    this.status = new StatusManager({ api, clock: this.#clock, log: log.child({ component: 'status' }) });
    const prober = new ProbeManager({
      exec: {
        execSync: async (containerId, cmd, timeoutS, s) => {
          // CRI enforces `timeout`; the call deadline only guards against a runtime that does not.
          const r = await client.runtime.execSync({ containerId, cmd, timeout: timeoutS }, { signal: s, timeoutMs: timeoutS * 1000 + c.runtimeRequestTimeoutMs });
          return { exitCode: r.exitCode, output: Buffer.concat([r.stdout, r.stderr]).toString('utf8') };
        },
      },
      events: this.events,
      clock: this.#clock,
      log: log.child({ component: 'prober' }),
      onResultChanged: (uid) => this.workers?.wake(uid),
      hostIP: () => this.#internalIP,
    });
    this.#store.add(prober);
    const lifecycle = new PodLifecycle({
      api,
      runtime,
      pleg: this.pleg,
      status: this.status,
      clock: this.#clock,
      log: log.child({ component: 'pods' }),
      hostIP: () => this.#internalIP,
      runtimeName: () => this.#runtimeName,
      nodeUid: () => this.node.node?.metadata.uid,
      inApi: (uid) => this.apiPods.has(uid),
      staticDesired: (uid) => this.staticPods.has(uid),
      onPodStarted: (_p, s) => this.metrics.podStartDuration.observe(s),
      prober,
    });
    this.workers = new PodWorkers({ syncer: lifecycle, cache: this.pleg, clock: this.#clock, log: log.child({ component: 'podworkers' }), resyncMs: c.syncFrequencyMs, signal });

    // 4. Recovery view before any pod arrives: what CRI already runs.
    await this.pleg.relist(signal).catch((err: unknown) => log.warn({ err: describeError(err) }, 'Initial relist failed'));
    log.info({ pods: this.pleg.all().size }, 'Runtime state recovered from CRI');

    // 5. Node API (:10250) and healthz (127.0.0.1:10248), serving the stored cluster-signed
    //    certificate, the configured one, or a self-signed one until the cluster signs one.
    const certs: NodeCertificatesOptions = {
      config: c, api, clock: this.#clock, random: this.#o.random ?? Math.random, log, internalIP: this.#internalIP,
      node: () => this.node.node, kubeconfigPath: this.#o.kubeconfigPath,
    };
    const serving = await servingCertificate(certs);
    const cert = serving.initial;
    this.#nodeApi = await startNodeApi({
      address: c.address,
      port: c.port,
      healthzAddress: c.healthzBindAddress,
      healthzPort: c.healthzPort,
      cert,
      clientCAFile: c.clientCAFile,
      authn: new NodeApiAuthenticator({ api, clock: this.#clock, log, anonymous: c.anonymousAuth, webhook: c.webhookAuth, cacheTTLMs: c.webhookCacheTTLMs, clientCA: !!c.clientCAFile }),
      authz: new NodeApiAuthorizer({
        api, nodeName: c.nodeName, clock: this.#clock, log, mode: c.authorizationMode,
        cacheAuthorizedTTLMs: c.authorizationCacheAuthorizedTTLMs, cacheUnauthorizedTTLMs: c.authorizationCacheUnauthorizedTTLMs,
      }),
      backend: this.#nodeApiBackend(),
      log: log.child({ component: 'node-api' }),
    });

    // 6. Loops.
    this.lease = new NodeLease({ api, nodeName: c.nodeName, durationSeconds: c.nodeLeaseDurationSeconds, clock: this.#clock, log: log.child({ component: 'lease' }), nodeUid: () => this.node.node?.metadata.uid });
    this.#source = new ApiPodSource({ api, nodeName: c.nodeName, clock: this.#clock, log: log.child({ component: 'pod-source' }) });
    this.#loops.push(
      this.pleg.run(signal),
      this.status.run(signal),
      this.events.run(signal),
      this.node.run(signal),
      this.lease.run(signal),
      this.#source.run(signal, {
        onSync: (pods) => this.#onApiSync(pods),
        onUpsert: (p) => this.#onApiUpsert(p),
        onRemove: (p) => this.#onApiRemove(p),
      }),
    );
    if (c.staticPodPath) this.#loops.push(this.#staticLoop(c.staticPodPath, signal));
    // Credentials: serving certificate (CSR flow, rotation) and node credential renewal.
    const failed = (what: string) => (err: unknown) => log.error({ err: describeError(err) }, what);
    this.servingCertificates = serving.manager;
    if (serving.manager) {
      const nodeApi = this.#nodeApi;
      this.#loops.push(serving.manager.run(signal, (p) => nodeApi.setServingCertificate(p.cert, p.key)).catch(failed('Serving certificate manager stopped')));
    }
    this.nodeCredentials = await nodeCredentialRotation(certs);
    if (this.nodeCredentials) this.#loops.push(this.nodeCredentials.run(signal).catch(failed('Node credential manager stopped')));
    // Pod directories (volumes, tmpfs and subPath mounts) of pods nobody wants: left by a crash or
    // by pods removed while the agent was down. A pod the runtime still has is torn down first.
    const gcLog = log.child({ component: 'gc' });
    this.#podDirCleanup = serialJob('pod-dirs', gcLog, async (s) => {
      const removed = await cleanupOrphanedPodDirs(c.rootDir, (uid) => this.#wantsPodDir(uid), hostMounter, s);
      if (removed.length) gcLog.info({ podUIDs: removed }, 'Orphaned pod directories removed');
    }, signal);
    this.#schedule(this.#o.housekeepingMs ?? 2000, () => this.#housekeeping());
    this.#startGcJobs();
    log.info({ node: c.nodeName, port: this.#nodeApi.port, healthzPort: this.#nodeApi.healthzPort }, 'Agent started');
  }

  #schedule(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.#store.add(toDisposable(() => clearInterval(t)));
  }

  #startGcJobs(): void {
    const c = this.config;
    const hk = {
      runtime: this.#cri.runtime,
      images: this.#cri.image,
      pleg: this.pleg,
      log: this.#log.child({ component: 'gc' }),
      imageGCHighThresholdPercent: c.imageGCHighThresholdPercent,
      imageGCLowThresholdPercent: c.imageGCLowThresholdPercent,
      imageMinimumGCAgeMs: c.imageMinimumGCAgeMs,
      pinnedImages: () => [],
      now: () => this.#clock.now(),
    };
    const stop = this.#stop.signal;
    const jobs = [
      cron.schedule('* * * * *', serialJob('container-gc', hk.log, (s) => collectContainers(hk, s), stop)),
      cron.schedule('*/5 * * * *', serialJob('image-gc', hk.log, (s) => collectImages(hk, s), stop)),
      cron.schedule('*/5 * * * *', serialJob('cni-gc', hk.log, (s) => this.#cniGc(s), stop)),
    ];
    this.#store.add(toDisposable(() => jobs.forEach((j) => j.stop())));
  }

  async #cniGc(signal: AbortSignal): Promise<void> {
    const net = this.#cni?.network();
    if (!net) return;
    const live = [...this.pleg.all().values()].flatMap((p) => p.sandboxes).map((s) => ({ containerID: s.id, ifName: 'eth0' }));
    const report = await this.#cni!.engine.gc(net, { validAttachments: live, signal });
    if (report.deleted.length) this.#log.info({ deleted: report.deleted.length }, 'CNI attachments garbage collected');
  }

  #envReader(): EnvSourceReader {
    const api = this.#o.api;
    const get = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_NOT_FOUND') return undefined;
        throw err;
      }
    };
    return {
      configMap: async (ns, name, signal) => {
        const cm = await get(() => api.get(CONFIGMAPS, name, { namespace: ns, signal }));
        return cm ? (cm.data ?? {}) : undefined;
      },
      secret: async (ns, name, signal) => {
        const s = await get(() => api.get(SECRETS, name, { namespace: ns, signal }));
        if (!s) return undefined;
        const out: Record<string, string> = { ...(s.stringData ?? {}) };
        for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
        return out;
      },
    };
  }

  async #health(signal: AbortSignal): Promise<RuntimeHealth> {
    const h: RuntimeHealth = { runtimeReady: false, networkReady: false, cniReady: !!this.#cni?.network(), plegHealthy: this.pleg.healthy(), runtimeName: this.#runtimeName, runtimeVersion: this.#runtimeVersion };
    if (!h.cniReady) h.cniMessage = 'pod CIDR not yet known (set spec.podCIDR or --pod-cidr)';
    try {
      const st = await this.#cri.runtime.status({}, { signal, timeoutMs: 5000 });
      const cond = (t: string) => st.status?.conditions.find((x) => x.type === t);
      const rr = cond('RuntimeReady');
      const nr = cond('NetworkReady');
      h.runtimeReady = !!rr?.status;
      h.runtimeMessage = rr?.message || rr?.reason;
      h.networkReady = !!nr?.status;
      h.networkMessage = nr ? `reason:${nr.reason} message:${nr.message}` : undefined;
    } catch (err) {
      h.runtimeMessage = describeError(err);
    }
    return h;
  }

  #onApiSync(pods: Pod[]): void {
    const seen = new Set<string>();
    for (const p of pods) {
      seen.add(p.metadata.uid!);
      this.#onApiUpsert(p);
    }
    for (const [uid, p] of this.apiPods) if (!seen.has(uid)) this.#onApiRemove(p);
  }

  #onApiUpsert(pod: Pod): void {
    if (isMirrorPod(pod)) return;
    this.apiPods.set(pod.metadata.uid!, pod);
    const deleting = !!pod.metadata.deletionTimestamp;
    this.workers.update({ pod, terminationRequested: deleting, gracePeriodS: deleting ? (pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds) : undefined });
  }

  #onApiRemove(pod: Pod): void {
    if (isMirrorPod(pod)) return;
    this.apiPods.delete(pod.metadata.uid!);
    this.workers.update({ pod, terminationRequested: true, gracePeriodS: pod.metadata.deletionGracePeriodSeconds ?? 0 });
  }

  async #staticLoop(dir: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const pods = await readStaticPods(dir, this.config.nodeName, this.#log);
        const next = new Map(pods.map((p) => [p.metadata.uid!, p]));
        for (const [uid, p] of this.staticPods) if (!next.has(uid)) {
          this.staticPods.delete(uid);
          this.workers.update({ pod: p, terminationRequested: true, gracePeriodS: p.spec?.terminationGracePeriodSeconds });
        }
        for (const [uid, p] of next) {
          if (!this.staticPods.has(uid)) this.workers.update({ pod: p });
          this.staticPods.set(uid, p);
        }
        this.#staticRead = true;
      } catch (err) {
        this.#log.warn({ dir, err: describeError(err) }, 'Static pod directory read failed');
      }
      await new Promise<void>((r) => {
        const cancel = this.#clock.setTimer(this.config.fileCheckFrequencyMs, r);
        signal.addEventListener('abort', () => { cancel(); r(); }, { once: true });
      });
    }
  }

  /** kubelet HandlePodCleanups: orphans (runtime pods nobody wants) are torn down; finished workers dropped. */
  #housekeeping(): void {
    if (!this.#source.synced || (this.config.staticPodPath && !this.#staticRead)) return;
    const desired = new Set([...this.apiPods.keys(), ...this.staticPods.keys()]);
    for (const [uid, p] of this.pleg.all()) {
      if (desired.has(uid) || this.workers.has(uid)) continue;
      const live = p.containers.some((c) => c.state === 'running') || p.sandboxes.length > 0 || p.containers.length > 0;
      if (!live) continue;
      this.#log.info({ pod: `${p.namespace}/${p.name}`, podUID: uid }, 'Tearing down orphaned pod');
      const standIn: Pod = { metadata: { uid, name: p.name, namespace: p.namespace }, spec: { containers: [], terminationGracePeriodSeconds: 2 } };
      this.workers.update({ pod: standIn, terminationRequested: true, gracePeriodS: 2 });
    }
    this.workers.syncKnownPods(desired);
    this.#podDirCleanup?.();
    this.#updateGauges();
  }

  /** A pod directory is kept while the API or a manifest wants the pod, a worker has it, or CRI still runs any of it. */
  #wantsPodDir(uid: string): boolean {
    if (this.apiPods.has(uid) || this.staticPods.has(uid) || this.workers.has(uid)) return true;
    const p = this.pleg.get(uid);
    return p.sandboxes.length > 0 || p.containers.length > 0;
  }

  #updateGauges(): void {
    let running = 0;
    let containers = 0;
    for (const p of this.pleg.all().values()) {
      if (p.sandboxes.some((s) => s.ready)) running++;
      containers += p.containers.filter((c) => c.state === 'running').length;
    }
    this.metrics.runningPods.set(running);
    this.metrics.runningContainers.set({ container_state: 'running' }, containers);
  }

  #nodeApiBackend() {
    const find = (ns: string, name: string) => [...this.apiPods.values(), ...this.staticPods.values()].find((p) => p.metadata.namespace === ns && p.metadata.name === name);
    return {
      pods: () => this.workers.pods().filter((p) => this.workers.phase(p.metadata.uid!) !== 'finished' || this.apiPods.has(p.metadata.uid!)),
      findContainer: (ns: string, podName: string, container: string, previous: boolean) => {
        const pod = find(ns, podName);
        if (!pod) return undefined;
        const all = this.pleg.get(pod.metadata.uid!).containers.filter((c) => c.name === container);
        const c = previous ? all[1] : all[0];
        if (!c) return undefined;
        return { id: c.id, running: c.state === 'running', logPath: c.logPath || join(podLogDir(pod, this.config.podLogsDir), container, `${c.restartCount}.log`) };
      },
      isRunning: async (id: string) => {
        const st = await this.#cri.runtime.containerStatus({ containerId: id }, { timeoutMs: 5000 }).catch(() => undefined);
        return st?.status?.state === 'CONTAINER_RUNNING';
      },
      runtime: this.#cri.runtime,
      metrics: async () => {
        this.#updateGauges();
        return { contentType: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
      },
      healthy: () => this.pleg.healthy(),
    };
  }

  /** The Services informer behind the pods' service variables, closed with the agent. */
  #serviceLister(api: ApiClient, log: Logger): ServiceLister {
    const lister = new ServiceLister({ api, clock: this.#clock, log: log.child({ component: 'services' }) });
    lister.start();
    this.#closers.push(() => lister.close());
    return lister;
  }

  /** RuntimeClass → runtime handler for new sandboxes (an informer closed with the agent). */
  #runtimeClasses(api: ApiClient, log: Logger): (pod: Pod, signal: AbortSignal) => Promise<string> {
    const manager = new RuntimeClassManager({ api, clock: this.#clock, log: log.child({ component: 'runtimeclass' }) });
    manager.start();
    this.#closers.push(() => manager.close());
    return (pod, signal) => manager.handlerFor(pod, signal);
  }

  /** Stops the agent; pods keep running in the runtime. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      await Promise.allSettled(this.#loops);
      await this.workers?.drain();
      await this.#nodeApi?.close();
      await this.proxy?.close();
      await this.#dns?.close();
      await this.#cni?.close();
      await Promise.allSettled(this.#closers.map((c) => c()));
      this.#store.dispose();
      this.#log.info({}, 'Agent stopped');
    })();
    return this.#closed;
  }
}
