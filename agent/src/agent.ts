/**
 * The agent: constructs its parts, starts them in order and closes them in reverse. It holds no
 * logic of its own; what each part does is in its folder (docs/agent.md, "What it does").
 *
 *   start():  pod dirs → CRI handshake → pod network (CNI service) → shared informers → cluster
 *             DNS → service proxy → PLEG, image list, node reporter, runtime, status, prober, pod
 *             configuration, admission, pod workers
 *             → first relist (the recovery view) → lease, GC, housekeeping → host parts (node
 *             API, resource stats, eviction, log rotation) → loops (PLEG, status, events, node
 *             status, image list, lease, pod configuration, housekeeping, node shutdown, host parts, credentials)
 *
 * Runtime, pod network, mounts and the host parts come from an AgentHost (host.ts): a real node,
 * or a hollow one (hollow/, docs/hollow-nodes.md) running the same code above the CRI.
 *   close():  abort the loops' signal, then undo every step above in reverse order. Idempotent.
 *             Running pods keep running.
 *
 * Crash-only: nothing is persisted by the agent but its credentials (certificates/: the serving
 * pair and the renewed node token, each written atomically); a restarted agent rebuilds its view
 * from CRI labels and the API, and does not restart running containers.
 */
import { setMaxListeners } from 'node:events';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError, systemClock, type Clock, type Logger } from '@nodelet/base';
import { NODES, type ApiClient, type Pod } from '@nodelet/api/agent';
import type { CriClient } from '@nodelet/cri-client';
import type { ShutdownInhibitor } from '@nodelet/systemd';
import type { AgentConfig } from './config/config.js';
import { nodeCredentialRotation, servingCertificate, type NodeCertificatesOptions } from './certificates/node-certificates.js';
import type { NodeCredentialManager } from './certificates/node-credential-manager.js';
import type { ServingCertManager } from './certificates/serving-cert-manager.js';
import { podDnsConfigurer, startClusterDns, type NodeDns } from './dns/index.js';
import { admitPod, type PodAdmitResult } from './admission/admit.js';
import { pressureAdmitHandler } from './admission/pressure.js';
import { criticalPodAdmissionHandler } from './admission/critical-preemption.js';
import { osAdmitHandler } from './admission/os.js';
import { resourceFitAdmitHandler } from './admission/resource-fit.js';
import { shutdownAdmitHandler } from './admission/shutdown.js';
import { userNamespacesAdmitHandler } from './admission/user-namespaces.js';
import { appArmorAdmitHandler, appArmorEnabled, supplementalGroupsPolicyAdmitHandler, sysctlAdmitHandler } from './admission/security.js';
import { EvictionManager } from './eviction/eviction-manager.js';
import { nodeHost, type AgentHost } from './host.js';
import { gcPasses } from './housekeeping/gc.js';
import { Housekeeping } from './housekeeping/housekeeping.js';
import { PodCgroups, hostCgroupMounts } from './cm/pod-cgroups.js';
import { PodAllocation } from './cm/pod-allocation.js';
import { ContainerLogManager } from './logs/container-log-manager.js';
import { NodeLease } from './node/lease.js';
import { NodeShutdownManager } from './nodeshutdown/shutdown-manager.js';
import { pickInternalIP } from './node/machine-info.js';
import { NodeReporter } from './node/node-reporter.js';
import { ImageInventory } from './node/image-inventory.js';
import { runtimeHealth } from './node/runtime-health.js';
import { Pleg } from './pleg/pleg.js';
import { PodLifecycle } from './pod-lifecycle.js';
import { PodWorkers } from './podworkers/pod-workers.js';
import { ProbeManager } from './prober/prober.js';
import { startServiceProxy, type ServiceProxy } from './proxy/index.js';
import { apiEnvSources } from './runtime/env-sources.js';
import { ImageManager } from './runtime/image-manager.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { criProbeExec } from './runtime/probe-exec.js';
import { TokenManager } from './runtime/token-manager.js';
import { cleanupOrphanedPodDirs } from './runtime/volumes.js';
import { NodeApiAuthenticator } from './server/authn.js';
import { NodeApiAuthorizer } from './server/authz.js';
import { AgentMetrics } from './server/metrics.js';
import { startNodeApi, type NodeApiServer } from './server/node-api.js';
import { nodeApiBackend } from './server/node-api-backend.js';
import { SharedInformers } from './source/informers.js';
import { NetworkPolicyEnforcer } from './netpol/enforcer.js';
import { PodConfig } from './source/pod-config.js';
import { ServiceLister } from './source/service-lister.js';
import { RuntimeClassManager } from './source/runtime-classes.js';
import { apiPullSecrets, apiVolumeSources } from './source/volume-sources.js';
import { sourceReader, WatchedObjects } from './source/watched-objects.js';
import { StatsCollector } from './stats/collector.js';
import { runtimeIdsFrom } from './stats/cadvisor-metrics.js';
import { PROBE_METRICS_CONTENT_TYPE, ProbeMetrics } from './prober/metrics.js';
import { configz } from './config/configz.js';
import { EventRecorder } from './status/event-recorder.js';
import { StatusManager } from './status/status-manager.js';
import { JourneyTracer } from '@nodelet/api/tracing';
import { AgentPodJourneys } from './tracing/pod-journeys.js';
import { RouteManager, uplinkMtu } from './network/route-manager.js';
import { commandRunner } from './proxy/exec.js';
import { VXLAN_ANNOTATION, VXLAN_DEFAULTS } from './network/route-plan.js';

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
  /** Resource stats sampling (10 s, docs/metrics.md). */
  statsPeriodMs?: number;
  /** systemd-logind for graceful node shutdown (default: the host's, see host.ts). */
  inhibitor?: ShutdownInhibitor;
  /** Where runtime, pod network and mounts come from (host.ts): a real node (default) or a hollow one. */
  host?: AgentHost;
}

/** Listeners the agent's loops (not its pod workers) may hold on its signal at once, with room to spare. */
const AGENT_LOOP_LISTENERS = 32;

export class Agent {
  readonly config: AgentConfig;
  readonly metrics: AgentMetrics;
  /** prober_probe_total (/metrics/probes). */
  readonly probeMetrics = new ProbeMetrics();
  readonly #o: AgentOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #internalIP: string;
  /** Aborted first by close(): every loop runs on it. */
  readonly #stop = new AbortController();
  /** What close() undoes, in reverse order of start. */
  readonly #closers: Array<{ what: string; close: () => unknown }> = [];
  #closed?: Promise<void>;
  #cri!: CriClient;
  #nodeApi?: NodeApiServer;
  #dns?: NodeDns;
  /** The service proxy (docs/services.md); undefined with proxy mode none. */
  proxy?: ServiceProxy;
  pleg!: Pleg;
  workers!: PodWorkers;
  status!: StatusManager;
  events!: EventRecorder;
  node!: NodeReporter;
  /** The runtime's images, read every 30 s and after pulls and image GC, for status.images. */
  images!: ImageInventory;
  lease!: NodeLease;
  /** Node-pressure eviction (eviction/): the pressure conditions and which pod goes when a threshold is met. Unset without host parts (host.ts). */
  eviction?: EvictionManager;
  /** Graceful node shutdown (nodeshutdown/): the logind delay lock and what a shutdown does to pods. */
  shutdown!: NodeShutdownManager;
  /** The pods this node should run: API and static sources merged (source/pod-config.ts). */
  pods!: PodConfig;
  /** The serving certificate's CSR flow and rotation (unset with tlsCertFile or serverTLSBootstrap off). */
  servingCertificates?: ServingCertManager;
  /** Node credential renewal (unset when off or when the kubeconfig holds no node token). */
  nodeCredentials?: NodeCredentialManager;
  /** The watches of the pods' ConfigMaps and Secrets (unset with configMapAndSecretChangeDetectionStrategy Get). */
  sources?: WatchedObjects;

  private constructor(o: AgentOptions) {
    this.#o = o;
    this.config = o.config;
    this.#log = o.log;
    this.#clock = o.clock ?? systemClock;
    this.metrics = new AgentMetrics(o.config.nodeName);
    this.#internalIP = pickInternalIP(o.config.nodeIP);
    // Every loop links to this signal once (about 15 with the host parts), every pod worker once
    // while it waits or syncs, and a pod's RunPodSandbox or StartContainer once while in flight
    // (PodRuntimeOptions.shutdown), each removed as its owner ends: past node's leak warning (10
    // listeners) by design. Beyond this bound it is a leak, and node still says so.
    setMaxListeners(AGENT_LOOP_LISTENERS + 3 * o.config.maxPods, this.#stop.signal);
  }

  static async start(o: AgentOptions): Promise<Agent> {
    const a = new Agent(o);
    try {
      await a.#start();
      return a;
    } catch (err) {
      await a.close().catch(() => undefined); // the start failure thrown below is what matters; close is best effort
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

  /** What both start phases (#start, #startHostParts) build every part from. */
  get #common(): { c: AgentConfig; log: Logger; clock: Clock; api: ApiClient; signal: AbortSignal; child: (component: string) => Logger } {
    const log = this.#log;
    return { c: this.config, log, clock: this.#clock, api: this.#o.api, signal: this.#stop.signal, child: (component) => log.child({ component }) };
  }

  async #start(): Promise<void> {
    const { c, log, clock, api, signal, child } = this.#common;
    const host = this.#o.host ?? nodeHost;

    // 1. Pod directories hold secret volumes: nobody but root walks into them on the node (kubelet: 0750).
    await mkdir(join(c.rootDir, 'pods'), { recursive: true });
    await chmod(join(c.rootDir, 'pods'), 0o750);

    // 2. Runtime: Version handshake, waiting for it like the kubelet.
    const { client: cri, version } = await host.connectRuntime(c, this.#o.runtimeWaitMs ?? 30_000);
    this.#cri = cri;
    this.#closing('cri', () => cri.close());
    const runtimeName = version.runtimeName || 'containerd';
    log.info({ runtime: runtimeName, version: version.runtimeVersion, endpoint: cri.endpoint, host: host.profile }, 'Container runtime connected');

    // Pod journey spans (docs/tracing.md): kept for the node API, exported when an endpoint is set.
    // A node runs at most maxPods pods: the last 512 starts are plenty to look back on, and keep
    // the store to a few MiB whatever the churn.
    const tracer = new JourneyTracer({ service: 'nodelet-agent', endpoint: c.tracingEndpoint, logger: child('tracing'), store: { maxTraces: 512, maxSpansPerTrace: 64 } });
    this.#closing('tracing', () => tracer.close());
    const journeys = new AgentPodJourneys(tracer, c.nodeName);

    // 3. Pod networking: on a node, the CNI service the runtime's nodelet-cni plugin forwards to.
    //    Behind VXLAN every pod packet carries the tunnel's headers: the pods' MTU leaves room for them.
    const routed = host.profile === 'node' && c.podNetwork.backend !== 'none';
    const mtu = routed && c.podNetwork.backend === 'vxlan' ? await uplinkMtu(commandRunner(), this.#internalIP, VXLAN_DEFAULTS.overhead) : undefined;
    const network = await host.startPodNetwork(c, log, { onAdd: (a) => a.podUid && journeys.cniAdd(a.podUid, a.startMs, a.endMs, a.error), ...(mtu ? { mtu } : {}) });
    this.#closing('pod network', () => network.close());

    // 4. One informer per resource, shared by the pod configuration, service env, proxy and DNS.
    const informers = new SharedInformers({ api, nodeName: c.nodeName, clock, log: child('informers') });
    informers.start();
    this.#closing('informers', () => informers.close());

    // 4b. Routes to the other nodes' pods (docs/network.md); a hollow node has no network to route.
    if (routed) {
      const routes = new RouteManager({
        backend: c.podNetwork.backend, runner: commandRunner(), nodeName: c.nodeName, nodeIP: this.#internalIP, vxlan: c.podNetwork.vxlan, clusterCIDR: c.proxy.clusterCIDR, log: child('routes'),
        publishVtep: async (value) => void (await api.patch(NODES, c.nodeName, { metadata: { annotations: { [VXLAN_ANNOTATION]: value } } }, { type: 'merge' })),
      });
      const sub = routes.watch(informers.nodes());
      this.#closing('pod routes', () => {
        sub.dispose();
        routes.close();
      });
    }

    // 5. Cluster DNS: the node-local resolver (docs/dns.md). It starts first so the proxy can send the
    //    kube-dns Service IP to it; a resolver that could not bind leaves kube-dns to its endpoints.
    const dnsInformers = c.clusterDNSResolver
      ? { services: informers.services(), endpointSlices: informers.endpointSlices(), namespaces: informers.namespaces(), pods: c.clusterDNSPodRecords === 'verified' ? informers.pods() : undefined }
      : undefined;
    this.#dns = await startClusterDns({ api, config: c, nodeIP: this.#internalIP, registry: this.metrics.registry, clock, log: child('dns'), informers: dnsInformers });
    this.#closing('dns', () => this.#dns?.close());

    // 6. Service proxy: its table (rejecting the whole service CIDR) is in place before any pod runs.
    const proxyInformers = c.proxy.mode === 'none' ? undefined : { services: informers.services(), endpointSlices: informers.endpointSlices(), node: informers.node(), nodes: informers.nodes() };
    const proxyConfig = { ...c.proxy, localDNS: c.proxy.localDNS ?? this.#dns?.address };
    //    NetworkPolicy rules live in the same table (docs/network.md); without the proxy nothing enforces them.
    const netpol = proxyInformers
      ? new NetworkPolicyEnforcer({ nodeName: c.nodeName, log: child('netpol'), clock, informers: { policies: informers.networkPolicies(), namespaces: informers.namespaces(), pods: informers.pods() } })
      : undefined;
    if (!netpol) log.info({}, 'Proxy mode none: NetworkPolicies are not enforced on this node');
    this.proxy = await startServiceProxy({ api, nodeName: c.nodeName, config: proxyConfig, log: child('proxy'), registry: this.metrics.registry, clock, informers: proxyInformers, extension: netpol });
    this.#closing('proxy', () => this.proxy?.close());

    // 7. Core: PLEG cache, node status, runtime, status, events, probes, pod configuration, workers.
    const pleg = (this.pleg = new Pleg({
      runtime: cri.runtime,
      clock,
      log: child('pleg'),
      periodMs: this.#o.relistPeriodMs,
      onPodChanged: (uid) => this.workers?.wake(uid),
      observeRelist: (s) => this.metrics.plegRelistDuration.observe(s),
      // The runtime is back: Ready again now, not at the next status period (up to 10 s later).
      onRecovered: () => this.node?.poke(),
    }));
    // A changed image list is a changed status: computed now, written only if what it reports changed.
    const images = (this.images = new ImageInventory({ images: cri.image, clock, log: child('images'), onChange: () => this.node?.wake() }));
    const node = (this.node = new NodeReporter({
      api,
      config: c,
      clock,
      log: child('node'),
      internalIP: this.#internalIP,
      agentVersion: AGENT_VERSION,
      nodeApiPort: () => this.#nodeApi?.port ?? c.port,
      health: runtimeHealth({
        runtime: cri.runtime, runtimeName, runtimeVersion: version.runtimeVersion,
        cniReady: () => network.ready(), plegHealthy: () => pleg.healthy(), shuttingDown: () => this.shutdown?.shuttingDown ?? false,
      }),
      pressure: () => this.eviction?.conditions() ?? new Set(),
      images: () => images.current,
      watchNode: (seen) => {
        // The factory already runs, so the informer starts as it is made.
        return informers.node().on({ onAdd: seen, onUpdate: (_old, n) => seen(n) });
      },
      onPodCIDR: (cidr) => {
        log.info({ podCIDR: cidr }, 'Pod CIDR set');
        network.setPodCIDR(cidr);
        node.poke();
      },
    }));
    const machine = await node.machineInfo();
    const events = (this.events = new EventRecorder({ api, clock, log: child('events'), nodeName: c.nodeName }));
    const dnsConfigurer = podDnsConfigurer({ config: c, nodeIP: this.#internalIP, events, log: child('dns') });
    const runtimeClasses = new RuntimeClassManager({ api, informer: informers.runtimeClasses() });
    // Pod and QoS-class cgroups (kubelet cgroupsPerQOS), made before any sandbox needs its parent.
    const reserved = (k: 'cpu' | 'memory'): number => (c.systemReserved[k] ?? 0) + (c.kubeReserved[k] ?? 0);
    const podCgroups = c.cgroupsPerQOS ? new PodCgroups({
      cgroupRoot: c.cgroupRoot, podPidsLimit: c.podPidsLimit, log: child('cgroups'), mounts: await hostCgroupMounts(),
      allocatable: { cpuMilli: Math.max(0, (machine.cpuCores - reserved('cpu')) * 1000), memoryBytes: machine.memoryBytes - reserved('memory') },
    }) : undefined;
    await podCgroups?.init();
    // In-place resize: what each pod is allocated; built before the workers exist, so read them late.
    const allocation = new PodAllocation({
      allocatable: () => node.node?.status?.allocatable ?? undefined,
      activePods: () => this.workers.pods().filter((p) => this.workers.phase(p.metadata.uid!) === 'sync'),
      wake: (uid) => this.workers.wake(uid),
      now: () => clock.now(),
    });
    // The pods' ConfigMaps and Secrets: one watch per object, opened and closed with the pods that
    // reference it (strategy Watch, docs/agent.md), or a GET per read (Get).
    const watched = (this.sources = c.configMapAndSecretChangeDetectionStrategy === 'Watch' ? new WatchedObjects({ api, clock, log: child('sources') }) : undefined);
    if (watched) this.#closing('configmap/secret watches', () => watched.close());
    const readSource = sourceReader(api, watched);
    const runtime = new PodRuntime({
      runtime: cri.runtime,
      images: new ImageManager({ images: cri.image, clock, maxParallelPulls: c.maxParallelImagePulls, onPulled: () => images.trigger() }),
      env: apiEnvSources(readSource),
      volumeSources: apiVolumeSources(api, readSource),
      pullSecrets: apiPullSecrets(readSource),
      clusterDomain: c.clusterDomain,
      mounter: host.mounter,
      tokens: new TokenManager({ api, clock }),
      services: new ServiceLister(informers.services()),
      events,
      clock,
      log: child('runtime'),
      paths: { rootDir: c.rootDir, podLogsDir: c.podLogsDir },
      nodeName: c.nodeName,
      hostIP: () => this.#internalIP,
      nodeMemoryBytes: machine.memoryBytes,
      seccompDefault: c.seccompDefault,
      runtimeRequestTimeoutMs: c.runtimeRequestTimeoutMs,
      shutdown: this.#stop.signal,
      crashLoopInitialMs: c.crashLoopInitialMs,
      crashLoopMaxMs: c.crashLoopMaxMs,
      onSandboxIps: (id, ips) => pleg.noteSandboxIps(id, ips),
      beforeContainers: netpol ? (pod, ips, s) => netpol.admit(pod, ips, s) : undefined,
      podDns: (pod, s) => dnsConfigurer.forPod(pod, s),
      runtimeHandler: (pod, s) => runtimeClasses.handlerFor(pod, s),
      steps: journeys,
      podCgroups,
      allocation,
    });
    this.status = new StatusManager({ api, clock, log: child('status'), onWritten: (uid, st) => journeys.statusWritten(uid, st), apiStatus: (uid) => this.pods?.get(uid)?.status });
    const prober = new ProbeManager({
      metrics: this.probeMetrics,
      exec: criProbeExec(cri.runtime, c.runtimeRequestTimeoutMs),
      events,
      clock,
      log: child('prober'),
      onResultChanged: (uid) => this.workers?.wake(uid),
      hostIP: () => this.#internalIP,
    });
    this.#closing('prober', () => prober.dispose());
    const pods = (this.pods = new PodConfig({
      pods: informers.nodePods(),
      nodeName: c.nodeName,
      staticPodPath: c.staticPodPath,
      fileCheckFrequencyMs: c.fileCheckFrequencyMs,
      clock,
      log: child('pod-config'),
      onUpdate: (u) => {
        journeys.seen(u.pod);
        this.workers.update(u);
      },
    }));
    const lifecycle = new PodLifecycle({
      events,
      api,
      runtime,
      pleg,
      status: this.status,
      clock,
      log: child('pods'),
      hostIP: () => this.#internalIP,
      runtimeName: () => runtimeName,
      nodeUid: () => node.node?.metadata.uid,
      inApi: (uid) => pods.inApi(uid),
      staticDesired: (uid) => pods.isStaticWanted(uid),
      onPodStarted: (_p, s) => this.metrics.podStartDuration.observe(s),
      prober,
      journeys,
      allocation,
      sources: watched,
    });
    const admission = [
      pressureAdmitHandler(() => this.eviction?.conditions() ?? new Set()),
      sysctlAdmitHandler(c.allowedUnsafeSysctls),
      appArmorAdmitHandler(appArmorEnabled()),
      supplementalGroupsPolicyAdmitHandler,
      shutdownAdmitHandler(() => this.shutdown?.shuttingDown ?? false),
      osAdmitHandler,
      resourceFitAdmitHandler(
        () => node.node?.status?.allocatable ?? undefined,
        criticalPodAdmissionHandler({
          // Built before the workers exist: read them when a critical pod is judged.
          activePods: () => this.workers.pods().filter((p) => this.workers.phase(p.metadata.uid!) === 'sync'),
          killPod: (pod, gracePeriodS, statusFn) => this.workers.kill(pod, { gracePeriodS, statusFn }),
          podEvent: (pod, type, reason, message) => events.event(pod, type, reason, message),
          now: () => clock.now(),
          log: child('preemption'),
        }),
      ),
      userNamespacesAdmitHandler(),
    ];
    const admitLog = child('admission');
    const admit = (pod: Pod, admitted: readonly Pod[]): PodAdmitResult => {
      // The other pods count at what they were allocated (a pending resize is not theirs yet).
      const r = admitPod(admission, pod, admitted.map((p) => allocation.allocatedPod(p)));
      journeys.admitted(pod, r.admit, r.admit ? undefined : r.reason);
      if (!r.admit) {
        admitLog.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, podUID: pod.metadata.uid, reason: r.reason, message: r.message }, 'Pod rejected');
        events.event(pod, 'Warning', r.reason, r.message);
      }
      return r;
    };
    const workers = (this.workers = new PodWorkers({ syncer: lifecycle, cache: pleg, clock, log: child('podworkers'), resyncMs: c.syncFrequencyMs, signal, admit }));
    const shutdownLog = child('nodeshutdown');
    this.shutdown = new NodeShutdownManager({
      inhibitor: this.#o.inhibitor ?? host.inhibitor(shutdownLog),
      gracePeriodMs: c.shutdownGracePeriodMs,
      criticalGracePeriodMs: c.shutdownGracePeriodCriticalPodsMs,
      activePods: () => workers.pods().filter((p) => workers.phase(p.metadata.uid!) === 'sync'),
      killPod: (pod, gracePeriodS, statusFn) => workers.kill(pod, { gracePeriodS, statusFn }),
      onChange: () => node.poke(),
      nodeEvent: (reason, message) => events.nodeEvent(c.nodeName, 'Normal', reason, message),
      clock,
      log: shutdownLog,
    });

    // 8. Recovery view before any pod arrives: what CRI already runs.
    await pleg.relist(signal).catch((err: unknown) => log.warn({ err: describeError(err) }, 'Initial relist failed'));
    log.info({ pods: pleg.all().size }, 'Runtime state recovered from CRI');

    // 9. Lease, garbage collection and housekeeping.
    this.lease = new NodeLease({ api, nodeName: c.nodeName, durationSeconds: c.nodeLeaseDurationSeconds, clock, log: child('lease'), nodeUid: () => node.node?.metadata.uid });
    const gcLog = child('gc');
    const gc = gcPasses({
      runtime: cri.runtime, images: cri.image, cni: network.cni, pleg, log: gcLog, pinnedImages: () => [], now: () => clock.now(),
      events, pod: (uid) => pods.get(uid), podGone: (uid) => pods.sourcesReady && !pods.wants(uid) && !workers.has(uid),
      imageGCHighThresholdPercent: c.imageGCHighThresholdPercent, imageGCLowThresholdPercent: c.imageGCLowThresholdPercent, imageMinimumGCAgeMs: c.imageMinimumGCAgeMs,
      onImagesRemoved: () => images.trigger(),
    });
    const housekeeping = new Housekeeping({
      clock,
      log: gcLog,
      pods,
      runtimePods: () => pleg.all(),
      workers,
      cleanupPodDirs: (keep, s) => cleanupOrphanedPodDirs(c.rootDir, keep, host.mounter, s),
      ...(podCgroups ? { cleanupPodCgroups: (keep: (uid: string) => boolean) => podCgroups.cleanup(keep) } : {}),
      gc,
      ...(c.imageGCScheduleCron ? { imageGCScheduleCron: c.imageGCScheduleCron } : {}),
      afterPodCleanup: () => this.metrics.observeRuntime(pleg.all().values()),
      housekeepingMs: this.#o.housekeepingMs,
    });
    const certs: NodeCertificatesOptions = {
      config: c, api, clock, random: this.#o.random ?? Math.random, log, internalIP: this.#internalIP,
      node: () => node.node, kubeconfigPath: this.#o.kubeconfigPath,
    };

    // 10. The host parts (host.ts): node API, resource stats and eviction, log rotation.
    const hostLoops = host.hostParts ? await this.#startHostParts({ cri, pods, workers, pleg, gc, node, events, certs, tracer, podCgroups }) : [];

    // 11. Loops, on the agent's signal. close() waits for them, then for the pod workers.
    this.#closing('pod workers', () => workers.drain());
    const stopped = (what: string) => (err: unknown) => log.error({ err: describeError(err) }, what);
    const loops: Array<Promise<unknown>> = [
      pleg.run(signal),
      this.status.run(signal),
      events.run(signal),
      node.run(signal),
      images.run(signal),
      this.lease.run(signal),
      pods.run(signal),
      housekeeping.run(signal),
      this.shutdown.run(signal),
      ...hostLoops,
    ];
    this.#closing('loops', () => Promise.allSettled(loops));
    // Node credential renewal (the serving certificate's is a host part).
    this.nodeCredentials = await nodeCredentialRotation(certs);
    if (this.nodeCredentials) loops.push(this.nodeCredentials.run(signal).catch(stopped('Node credential manager stopped')));
    log.info({ node: c.nodeName, port: this.#nodeApi?.port, healthzPort: this.#nodeApi?.healthzPort }, 'Agent started');
  }

  /**
   * Node API (:10250) and healthz (127.0.0.1:10248), serving the stored cluster-signed certificate,
   * the configured one, or a self-signed one until the cluster signs one; resource stats,
   * node-pressure eviction and container log rotation. Returns their loops, running on the agent's signal.
   */
  async #startHostParts(p: {
    cri: CriClient; pods: PodConfig; workers: PodWorkers; pleg: Pleg; gc: ReturnType<typeof gcPasses>;
    node: NodeReporter; events: EventRecorder; certs: NodeCertificatesOptions; tracer: JourneyTracer; podCgroups?: PodCgroups;
  }): Promise<Array<Promise<unknown>>> {
    const { cri, pods, workers, pleg, gc, node, events, tracer } = p;
    const { c, log, clock, api, signal, child } = this.#common;
    const serving = await servingCertificate(p.certs);
    const stats = new StatsCollector({ runtime: cri.runtime, images: cri.image, nodeName: c.nodeName, rootDir: c.rootDir, podLogsDir: c.podLogsDir, clock, log: child('stats'), periodMs: this.#o.statsPeriodMs });
    const nodeApi = (this.#nodeApi = await startNodeApi({
      address: c.address,
      port: c.port,
      healthzAddress: c.healthzBindAddress,
      healthzPort: c.healthzPort,
      cert: serving.initial,
      clientCAFile: c.clientCAFile,
      authn: new NodeApiAuthenticator({ api, clock, log, anonymous: c.anonymousAuth, webhook: c.webhookAuth, cacheTTLMs: c.webhookCacheTTLMs, clientCA: !!c.clientCAFile }),
      authz: new NodeApiAuthorizer({
        api, nodeName: c.nodeName, clock, log, mode: c.authorizationMode,
        cacheAuthorizedTTLMs: c.authorizationCacheAuthorizedTTLMs, cacheUnauthorizedTTLMs: c.authorizationCacheUnauthorizedTTLMs,
      }),
      backend: nodeApiBackend({ pods, workers, pleg, runtime: cri.runtime, metrics: this.metrics, podLogsDir: c.podLogsDir }),
      stats: { summary: (s) => stats.summary(s), runtimeIds: runtimeIdsFrom(() => pleg.all(), p.podCgroups ? (uid) => p.podCgroups?.pathOf(uid) : undefined) },
      routes: {
        '/metrics/probes': () => ({ contentType: PROBE_METRICS_CONTENT_TYPE, body: this.probeMetrics.render() }),
        '/configz': () => ({ contentType: 'application/json', body: JSON.stringify(configz(c)) }),
      },
      traces: (traceId) => tracer.spans(traceId),
      log: child('node-api'),
    }));
    this.#closing('node API', () => nodeApi.close());
    const logRotation = new ContainerLogManager({
      runtime: cri.runtime,
      running: () => [...pleg.all().values()].flatMap((x) => x.containers.filter((y) => y.state === 'running')),
      policy: { maxSizeBytes: c.containerLogMaxSizeBytes, maxFiles: c.containerLogMaxFiles },
      periodMs: c.containerLogMonitorIntervalMs,
      clock,
      log: child('logs'),
    });
    const eviction = (this.eviction = new EvictionManager({
      nodeName: c.nodeName,
      thresholds: c.evictionThresholds,
      pressureTransitionPeriodMs: c.evictionPressureTransitionPeriodMs,
      maxPodGracePeriodS: c.evictionMaxPodGracePeriodS,
      summary: (s, fresh) => (fresh ? stats.collect(s) : stats.summary(s)),
      activePods: () => workers.pods().filter((x) => workers.phase(x.metadata.uid!) === 'sync'),
      killPod: (pod, gracePeriodS, statusFn) => workers.kill(pod, { gracePeriodS, statusFn }),
      reclaimDisk: async (s) => {
        await gc.containers(s);
        await gc.unusedImages(s);
      },
      podEvent: (pod, type, reason, message) => events.event(pod, type, reason, message),
      nodeEvent: (type, reason, message) => events.nodeEvent(c.nodeName, type, reason, message),
      onConditionsChanged: () => node.poke(),
      clock,
      log: child('eviction'),
    }));
    const loops: Array<Promise<unknown>> = [stats.run(signal), eviction.run(signal), logRotation.run(signal)];
    // The serving certificate: CSR flow and rotation.
    this.servingCertificates = serving.manager;
    if (serving.manager) {
      loops.push(serving.manager.run(signal, (x) => nodeApi.setServingCertificate(x.cert, x.key)).catch((err: unknown) => log.error({ err: describeError(err) }, 'Serving certificate manager stopped')));
    }
    return loops;
  }

  /** Registers the undo of a start step; close() runs them in reverse order. */
  #closing(what: string, close: () => unknown): void {
    this.#closers.push({ what, close });
  }


  /** Stops the agent; pods keep running in the runtime. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      for (const { what, close } of this.#closers.splice(0).reverse()) {
        try {
          await close();
        } catch (err) {
          this.#log.warn({ part: what, err: describeError(err) }, 'Agent part failed to close');
        }
      }
      this.#log.info({}, 'Agent stopped');
    })();
    return this.#closed;
  }
}
