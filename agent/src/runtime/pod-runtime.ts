/**
 * PodRuntime: performs `computePodActions` against CRI (kubelet kuberuntime_manager.go SyncPod,
 * KillPod) and records why containers could not start (the reason cache the status reads).
 *
 * Concurrency: the pod workers guarantee at most one call per pod UID at a time; different pods run
 * concurrently. Every method takes the worker's signal; cleanup after a failure gets its own deadline.
 * The only importer of CRI in the pod lifecycle (docs/contributing.md, layers).
 */
import { AgentError, abortError, describeError, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import type { Container, EphemeralContainer, Pod, Service } from '@nodelet/api/agent';
import type { PodSandboxConfig, RuntimeService } from '../kubecontainer/cri.js';
import { buildContainerConfig, buildSandboxConfig, isSafePodUid, podLogDir, type PodPaths } from './container-config.js';
import { resolveEnv, type EnvSourceReader } from './env.js';
import type { ImageManager } from './image-manager.js';
import { podKeyring, type PullSecretReader } from './keyring.js';
import { ensureHostsFile } from './etc-hosts.js';
import { containerHash, type ContainerType } from '../kubecontainer/labels.js';
import { latestContainer, type ObservedPod } from '../kubecontainer/observed.js';
import { computePodActions, type ProbeFailed } from './pod-actions.js';
import { isSidecar, type ProbeStarted } from '../kubecontainer/helpers.js';
import { RestartBackoff } from './restart-backoff.js';
import { hostMounter, type Mounter } from './mount.js';
import { prepareContainerSubPaths } from './subpath.js';
import { applyFsGroup } from './fs-group.js';
import { podPathProblems, preparePodVolumes, removePodDir, type VolumeContext, type VolumeSourceReader } from './volumes.js';
import type { TokenSource } from './token-manager.js';
import { serviceEnvVars } from './service-env.js';
import { stopContainer, type ContainerStopDeps, type ContainerToStop } from './container-stop.js';
import { runLifecycleHook } from './lifecycle-hooks.js';
import { actuateResize, type ResizeAllocation } from './pod-resize.js';
import { rm } from 'node:fs/promises';
import type { PodEventSink } from '../kubecontainer/events.js';
import type { StartFailure } from '../status/pod-status.js';
import type { PodStepRecorder } from '../tracing/pod-journeys.js';
import { ATTR, SPAN } from '@nodelet/api/tracing';

/** What the service environment variables are made from. `synced` false: not listed yet. */
export interface ServiceSource {
  readonly synced: boolean;
  inNamespace(namespace: string): Service[];
  get(namespace: string, name: string): Service | undefined;
}

export interface PodRuntimeOptions {
  runtime: RuntimeService;
  images: ImageManager;
  env: EnvSourceReader;
  /** ConfigMap/Secret bytes for volumes; defaults to `env`'s strings as UTF-8. */
  volumeSources?: VolumeSourceReader;
  /** tmpfs and subPath bind mounts; defaults to the node's mount(8). */
  mounter?: Mounter;
  /** Service-account tokens for projected volumes (token-manager.ts). */
  tokens?: TokenSource;
  /** Services for the pods' service environment variables (source/service-lister.ts). */
  services?: ServiceSource;
  events: PodEventSink;
  clock: Clock;
  log: Logger;
  paths: PodPaths;
  nodeName: string;
  hostIP: () => string;
  nodeMemoryBytes: number;
  /** kubelet `seccompDefault`: RuntimeDefault for containers without a seccomp profile (default Unconfined). */
  seccompDefault?: boolean;
  runtimeRequestTimeoutMs: number;
  /**
   * The agent's own lifetime (aborted when it shuts down). RunPodSandbox and StartContainer, once
   * sent, are cancelled by it only, not by the pod's sync being preempted (a deletion): containerd
   * 1.6 leaves the task's cgroups behind when such a call is cancelled while its shim creates the
   * task (the shim is torn down before runc's state exists, so nothing removes them). The sync
   * still ends as soon as the call returns. Unset: the sync's signal cancels them (tests).
   */
  shutdown?: AbortSignal;
  /** CrashLoopBackOff: 10 s doubling to 300 s unless configured. */
  crashLoopInitialMs?: number;
  crashLoopMaxMs?: number;
  /** Told the IPs of a sandbox it just created (the PLEG cache keeps them). */
  onSandboxIps?(sandboxId: string, ips: string[]): void;
  /**
   * Awaited before containers start, once the sandbox has its IPs (NetworkPolicy: the pod's
   * rules are live before its first packet; netpol/enforcer.ts `admit`).
   */
  beforeContainers?(pod: Pod, podIPs: readonly string[], signal: AbortSignal): Promise<void>;
  /** The sandbox's DNSConfig (dnsPolicy rules, agent/src/dns/); unset: the runtime's default. */
  podDns?(pod: Pod, signal: AbortSignal): Promise<PodSandboxConfig['dnsConfig']>;
  /** The CRI runtime handler of the pod's RuntimeClass (source/runtime-classes.ts); unset or `''`: the runtime's default. */
  runtimeHandler?(pod: Pod, signal: AbortSignal): Promise<string>;
  /** The cluster's DNS domain, for the FQDN line of a pod with a subdomain in its /etc/hosts (default cluster.local). */
  clusterDomain?: string;
  /** The node's hosts file, copied for host-network pods (default /etc/hosts). */
  nodeHostsFile?: string;
  /** The pods' image pull secrets (source/volume-sources.ts); unset: images are pulled anonymously. */
  pullSecrets?: PullSecretReader;
  /** Where the steps of a pod's first start go as journey spans (tracing/pod-journeys.ts). */
  steps?: PodStepRecorder;
  /** The pod cgroups (cm/pod-cgroups.ts); none with cgroupsPerQOS off. */
  podCgroups?: { ensure(pod: Pod): Promise<string>; parent(pod: Pod): string };
  /** In-place resize (cm/pod-allocation.ts): running containers get the pod's allocated resources. */
  allocation?: ResizeAllocation;
}

export interface SyncResult {
  /** Sync again after this long (a backoff expires); undefined = normal resync. */
  requeueAfterMs?: number;
  /** Something was created, started or killed: the PLEG should relist now. */
  changed: boolean;
}

const CLEANUP_MS = 30_000;
const ATTR_CONTAINER = ATTR.containerName;
const ATTR_IMAGE = ATTR.image;
/** A pod the agent refuses to lay out is looked at again this often (its spec cannot change, a static pod's file can). */
const INVALID_POD_RETRY_MS = 30_000;

function utf8Reader(env: EnvSourceReader): VolumeSourceReader {
  const bytes = (d: Record<string, string> | undefined) => d && Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v, 'utf8')]));
  return {
    configMap: async (ns, name, signal) => bytes(await env.configMap(ns, name, signal)),
    secret: async (ns, name, signal) => bytes(await env.secret(ns, name, signal)),
  };
}

/** The pod spec list a container type comes from (for event field paths). */
function listOf(type: ContainerType): string {
  return type === 'init' ? 'initContainers' : type === 'ephemeral' ? 'ephemeralContainers' : 'containers';
}

/** The ID of the running container an ephemeral container targets; it must be running to be joined. */
function runningTarget(observed: ObservedPod, name: string): string {
  const t = observed.containers.find((c) => c.name === name && c.type !== 'ephemeral' && c.state === 'running');
  if (!t) throw new AgentError('ERR_FAILED_PRECONDITION', `target container "${name}" is not running`);
  return t.id;
}

export class PodRuntime {
  readonly #o: PodRuntimeOptions;
  readonly #failures = new Map<string, Map<string, StartFailure>>();
  readonly #restarts: RestartBackoff;
  readonly #volumes: VolumeContext;
  /** Containers (by ID) whose preStop hook has started: a restarted termination does not repeat it. */
  readonly #preStopped = new Map<string, Set<string>>();
  readonly #stopDeps: ContainerStopDeps;
  /** Pods whose volumes were set up once by this process: a failed refresh keeps them (syncPod step 3). */
  readonly #volumesReady = new Set<string>();

  constructor(o: PodRuntimeOptions) {
    this.#o = o;
    this.#stopDeps = { runtime: o.runtime, clock: o.clock, runtimeRequestTimeoutMs: o.runtimeRequestTimeoutMs, events: o.events, log: o.log };
    this.#restarts = new RestartBackoff({ clock: o.clock, initialMs: o.crashLoopInitialMs, maxMs: o.crashLoopMaxMs });
    this.#volumes = { rootDir: o.paths.rootDir, reader: o.volumeSources ?? utf8Reader(o.env), mounter: o.mounter ?? hostMounter, ...(o.tokens ? { tokens: o.tokens } : {}) };
  }

  /** The pod's service variables; like kubelet, no container starts before Services were listed once. */
  #serviceEnv(pod: Pod): Map<string, string> {
    const src = this.#o.services;
    if (!src) return new Map();
    if (!src.synced) throw new AgentError('ERR_UNAVAILABLE', 'services have not yet been read at least once, cannot construct envvars', { retryable: true });
    const ns = pod.metadata.namespace ?? 'default';
    return serviceEnvVars({ namespace: ns, enableServiceLinks: pod.spec?.enableServiceLinks ?? true, services: src.inNamespace(ns), master: src.get('default', 'kubernetes') });
  }

  /** The last start failure per container name of a pod (for the status). */
  failures(uid: string): ReadonlyMap<string, StartFailure> {
    return this.#failures.get(uid) ?? new Map();
  }

  #fail(uid: string, name: string, f: StartFailure | undefined): void {
    let m = this.#failures.get(uid);
    if (!f) {
      m?.delete(name);
      return;
    }
    if (!m) this.#failures.set(uid, (m = new Map()));
    m.set(name, f);
  }

  /** Forgets everything about a pod that is gone. */
  forget(uid: string): void {
    this.#failures.delete(uid);
    this.#preStopped.delete(uid);
    this.#volumesReady.delete(uid);
    this.#restarts.forgetPrefix(`${uid}/`);
    this.#o.images.forget(uid);
    this.#o.events.forget?.(uid);
  }

  /**
   * Defence in depth for pods that never passed the API server (static pods) or passed an older
   * one: a pod whose volume, mount or container names would name host paths gets no directory,
   * sandbox or container; every container waits in CreateContainerConfigError and a FailedMount
   * event says why.
   */
  #refuseInvalid(pod: Pod): boolean {
    const problems = podPathProblems(pod);
    if (problems.length === 0) return false;
    const message = `invalid pod spec, refusing to create its volumes: ${problems.join('; ')}`;
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) this.#fail(pod.metadata.uid!, c.name, { reason: 'CreateContainerConfigError', message });
    this.#o.events.event(pod, 'Warning', 'FailedMount', message);
    this.#o.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, podUID: pod.metadata.uid, problems }, 'Pod refused: invalid volume paths');
    return true;
  }

  /** Brings the runtime to the desired pod: steps of kubelet SyncPod. */
  async syncPod(pod: Pod, observed: ObservedPod, signal: AbortSignal, probeFailed?: ProbeFailed, probeStarted?: ProbeStarted): Promise<SyncResult> {
    if (this.#refuseInvalid(pod)) return { changed: false, requeueAfterMs: INVALID_POD_RETRY_MS };
    const actions = computePodActions(pod, observed, probeFailed, probeStarted);
    const result: SyncResult = { changed: false };
    const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;

    // 1. Kill the pod when its sandbox must be replaced (or nothing should run any more).
    if (actions.killPod) {
      const live = observed.containers.some((c) => c.state === 'running') || observed.sandboxes.some((s) => s.ready);
      if (live) {
        await this.#killPod(pod, observed, grace, signal, false);
        result.changed = true;
      }
      if (!actions.createSandbox) return result;
    }
    // 2. Kill containers whose spec changed.
    // kubelet kills them one by one, each with its preStop hook and at least 2 s after SIGTERM.
    for (const k of actions.containersToKill) {
      const spec = (k.type === 'init' ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === k.name);
      const fieldPath = `spec.${k.type === 'init' ? 'initContainers' : 'containers'}{${k.name}}`;
      const target: ContainerToStop = { id: k.id, name: k.name, running: true, spec, fieldPath, ...(k.probe ? { message: k.reason } : {}) };
      await this.#stop(pod, target, grace, observed.sandboxes[0]?.ips[0], signal);
      result.changed = true;
    }
    // 3. Create the sandbox (CNI ADD happens inside RunPodSandbox, through the runtime).
    let sandboxId = actions.sandboxId;
    let podIPs = observed.sandboxes[0]?.ips ?? [];
    const uid = pod.metadata.uid!;
    if (actions.createSandbox) {
      const steps = this.#o.steps;
      let t0 = steps?.now() ?? 0;
      try {
        await preparePodVolumes(pod, this.#volumes, signal);
      } catch (err) {
        // The pod waits in ContainerCreating and says why, as kubelet's volume manager does.
        if (!signal.aborted) this.#o.events.event(pod, 'Warning', 'FailedMount', describeError(err));
        throw err;
      }
      // Ownership for fsGroup once per sandbox, before any container (kubelet does it at volume setup).
      await applyFsGroup(pod, this.#o.paths.rootDir, signal);
      steps?.step(uid, SPAN.agentVolumes, t0);
      this.#volumesReady.add(uid);
      t0 = steps?.now() ?? 0;
      try {
        const runtimeHandler = (await this.#o.runtimeHandler?.(pod, signal)) ?? '';
        const cgroupParent = await this.#o.podCgroups?.ensure(pod);
        const config = buildSandboxConfig(pod, actions.attempt, this.#o.paths, await this.#o.podDns?.(pod, signal), this.#o.seccompDefault, cgroupParent, this.#o.clusterDomain);
        const res = await this.#creatingTask(signal, (s) => this.#o.runtime.runPodSandbox({ config, runtimeHandler }, { signal: s }));
        sandboxId = res.podSandboxId;
        steps?.sandbox(uid, t0);
      } catch (err) {
        steps?.sandbox(uid, t0, err);
        if (!isAbortError(err)) this.#o.events.event(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${describeError(err)}`);
        throw err;
      }
      result.changed = true;
      const st = await this.#o.runtime.podSandboxStatus({ podSandboxId: sandboxId }, { signal });
      const net = st.status?.network;
      podIPs = net?.ip ? [net.ip, ...(net.additionalIps ?? []).map((x) => x.ip)] : [];
      this.#o.onSandboxIps?.(sandboxId, podIPs);
    } else if (!sandboxId) {
      return result;
    } else {
      // Volumes are refreshed on every sync, so configMap/secret edits reach the files. Once they
      // were set up, a failed refresh (the API server away) keeps the files as they are and the
      // sync goes on, as kubelet's volume manager only waits for volumes to be mounted: crashed
      // containers are restarted without the API server.
      try {
        await preparePodVolumes(pod, this.#volumes, signal);
        this.#volumesReady.add(uid);
      } catch (err) {
        if (signal.aborted || !this.#volumesReady.has(uid)) throw err;
        this.#o.events.event(pod, 'Warning', 'FailedMount', `Failed to refresh volumes, keeping their current contents: ${describeError(err)}`);
        this.#o.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, podUID: uid, err: describeError(err) }, 'Volume refresh failed');
      }
    }
    const sandboxConfig = buildSandboxConfig(pod, actions.attempt, this.#o.paths, undefined, this.#o.seccompDefault, this.#o.podCgroups?.parent(pod), this.#o.clusterDomain);
    const ctx = { pod, observed, sandboxId, sandboxConfig, podIPs, result, signal };
    // In-place resize of running containers (the sandbox was there before this sync).
    if (this.#o.allocation && !actions.createSandbox && (await this.#resize(pod, observed, signal))) result.changed = true;
    const starts = actions.nextInitContainer !== undefined || actions.sidecarsToStart.length > 0 || actions.containersToStart.length > 0 || actions.ephemeralToStart.length > 0;
    if (starts && podIPs.length && this.#o.beforeContainers) await this.#o.beforeContainers(pod, podIPs, signal);

    // 4. Init containers, one at a time.
    if (actions.nextInitContainer !== undefined) {
      await this.#startContainer(ctx, pod.spec!.initContainers![actions.nextInitContainer]!, 'init');
      return result;
    }
    // 5. Sidecars that exited, then app containers. A failure of one does not stop the others.
    for (const i of actions.sidecarsToStart) {
      await this.#startContainer(ctx, pod.spec!.initContainers![i]!, 'init');
    }
    for (const i of actions.containersToStart) {
      await this.#startContainer(ctx, pod.spec!.containers[i]!, 'regular');
    }
    // 6. Ephemeral containers, once each.
    for (const i of actions.ephemeralToStart) {
      await this.#startContainer(ctx, pod.spec!.ephemeralContainers![i]!, 'ephemeral');
    }
    return result;
  }

  async #startContainer(
    ctx: { pod: Pod; observed: ObservedPod; sandboxId: string; sandboxConfig: PodSandboxConfig; podIPs: string[]; result: SyncResult; signal: AbortSignal },
    c: EphemeralContainer,
    type: ContainerType,
  ): Promise<void> {
    const { pod, observed, signal, result } = ctx;
    const uid = pod.metadata.uid!;
    const previous = latestContainer(observed, c.name, type);
    const restartCount = previous ? previous.restartCount + 1 : 0;
    const fieldPath = `spec.${listOf(type)}{${c.name}}`;
    const requeue = (ms: number): void => {
      result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, Math.max(ms, 100));
    };

    // CrashLoopBackOff: a container that died waits out its backoff before the next start.
    if (previous && previous.state === 'exited') {
      const key = `${uid}/${c.name}/${containerHash(c)}`;
      const died = previous.finishedAt ?? previous.createdAt;
      const wait = this.#restarts.remaining(key, died);
      if (wait > 0) {
        const delayS = Math.round(this.#restarts.delay(key) / 1000);
        const message = `back-off ${delayS}s restarting failed container=${c.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${uid})`;
        this.#fail(uid, c.name, { reason: 'CrashLoopBackOff', message });
        this.#o.events.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container', fieldPath);
        requeue(wait);
        return;
      }
      this.#restarts.next(key, died);
    }

    const steps = this.#o.steps;
    const traced = { [ATTR_CONTAINER]: c.name };
    let t0 = steps?.now() ?? 0;
    let pulled = false;
    let imageRef: string;
    try {
      const events = this.#imageEvents(pod, fieldPath);
      const read = this.#o.pullSecrets;
      const keyring = read && (() => podKeyring(pod, read, signal, (names) => this.#o.events.event(pod, 'Warning', 'FailedToRetrieveImagePullSecret', `Unable to retrieve some image pull secrets (${names.join(', ')}); attempting to pull the image may not succeed.`)));
      imageRef = await this.#o.images.ensureImage(uid, c, { ...events, pulling: (image) => ((pulled = true), events.pulling(image)) }, signal, keyring);
      steps?.step(uid, pulled ? SPAN.agentImagePull : SPAN.agentImagePresent, t0, { ...traced, [ATTR_IMAGE]: c.image ?? '' });
    } catch (err) {
      if (signal.aborted) throw err;
      const reason = hasCode(err, 'ERR_IMAGE_PULL_BACKOFF') ? 'ImagePullBackOff' : hasCode(err, 'ERR_FAILED_PRECONDITION') ? 'ErrImageNeverPull' : 'ErrImagePull';
      this.#fail(uid, c.name, { reason, message: describeError(err) });
      if (reason === 'ImagePullBackOff') this.#o.events.event(pod, 'Normal', 'BackOff', `Back-off pulling image "${c.image}"`, fieldPath);
      requeue(reason === 'ErrImagePull' ? 1000 : 5000);
      return;
    }

    t0 = steps?.now() ?? 0;
    let config;
    try {
      const imageUser = await this.#o.images.imageUser(imageRef, signal);
      const env = await resolveEnv(pod, c, { podIPs: ctx.podIPs, hostIP: this.#o.hostIP(), nodeName: this.#o.nodeName }, this.#o.env, signal, this.#serviceEnv(pod));
      // Verified and bind-mounted now, right before CreateContainer (subpath.ts).
      const subPaths = await prepareContainerSubPaths(pod, c, env, this.#o.paths.rootDir, this.#volumes.mounter, signal);
      const targetContainerId = type === 'ephemeral' && c.targetContainerName ? runningTarget(observed, c.targetContainerName) : undefined;
      config = buildContainerConfig({ pod, container: c, type, restartCount, imageRef, env, paths: this.#o.paths, nodeMemoryBytes: this.#o.nodeMemoryBytes, subPaths, imageUser, seccompDefault: this.#o.seccompDefault, targetContainerId });
      const podIPs = pod.spec?.hostNetwork ? [this.#o.hostIP()] : ctx.podIPs;
      const hosts = await ensureHostsFile(pod, c, podIPs, { rootDir: this.#o.paths.rootDir, clusterDomain: this.#o.clusterDomain ?? 'cluster.local', nodeHostsFile: this.#o.nodeHostsFile });
      if (hosts) config.mounts = [...(config.mounts ?? []), hosts];
    } catch (err) {
      if (signal.aborted) throw err;
      this.#fail(uid, c.name, { reason: 'CreateContainerConfigError', message: describeError(err) });
      this.#o.events.event(pod, 'Warning', 'Failed', `Error: ${describeError(err)}`, fieldPath);
      requeue(5000);
      return;
    }

    let containerId: string;
    try {
      const res = await this.#o.runtime.createContainer({ podSandboxId: ctx.sandboxId, config, sandboxConfig: ctx.sandboxConfig }, { signal });
      containerId = res.containerId;
      if (type === 'regular') this.#o.allocation?.acknowledge(uid, c.name, containerId, c.resources);
      steps?.step(uid, SPAN.agentContainerCreate, t0, traced);
    } catch (err) {
      if (signal.aborted) throw err;
      this.#fail(uid, c.name, { reason: 'CreateContainerError', message: describeError(err) });
      this.#o.events.event(pod, 'Warning', 'Failed', `Error: ${describeError(err)}`, fieldPath);
      requeue(5000);
      return;
    }
    result.changed = true;
    this.#o.events.event(pod, 'Normal', 'Created', `Created container ${c.name}`, fieldPath);
    t0 = steps?.now() ?? 0;
    try {
      await this.#creatingTask(signal, (s) => this.#o.runtime.startContainer({ containerId }, { signal: s }));
      steps?.step(uid, SPAN.agentContainerStart, t0, traced);
    } catch (err) {
      if (signal.aborted) throw err;
      this.#fail(uid, c.name, { reason: 'RunContainerError', message: describeError(err) });
      this.#o.events.event(pod, 'Warning', 'Failed', `Error: ${describeError(err)}`, fieldPath);
      requeue(5000);
      return;
    }
    this.#o.events.event(pod, 'Normal', 'Started', `Started container ${c.name}`, fieldPath);
    // postStart blocks this sync (so the container is not reported running, and no probe starts,
    // until it returns); a failure kills the container and the restart policy takes over.
    const postStart = c.lifecycle?.postStart;
    if (postStart) {
      t0 = steps?.now() ?? 0;
      const failure = await runLifecycleHook(postStart, { pod, container: c, containerId, podIP: ctx.podIPs[0] }, this.#stopDeps, { signal });
      steps?.step(uid, SPAN.agentPostStart, t0, traced, failure === undefined ? undefined : new Error('postStart hook failed'));
      if (failure !== undefined) {
        this.#o.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, podUID: uid, container: c.name, failure }, 'PostStart hook failed');
        // The message stays out of the event: hook output may hold secrets (kubelet does the same).
        this.#o.events.event(pod, 'Warning', 'FailedPostStartHook', 'PostStartHook failed', fieldPath);
        const target: ContainerToStop = { id: containerId, name: c.name, running: true, spec: c, fieldPath, message: 'FailedPostStartHook' };
        await this.#stop(pod, target, pod.spec?.terminationGracePeriodSeconds ?? 30, ctx.podIPs[0], signal);
        this.#fail(uid, c.name, { reason: 'PostStartHookError', message: failure });
        requeue(0);
        return;
      }
    }
    this.#fail(uid, c.name, undefined);
  }

  /**
   * A CRI call that creates a runtime task (PodRuntimeOptions.shutdown): only the agent's shutdown
   * cancels it once sent; the sync's abort takes effect when it returns, and the pod's next pass
   * (a termination) finds what it created in the runtime's fresh state.
   */
  async #creatingTask<T>(signal: AbortSignal, call: (s: AbortSignal) => Promise<T>): Promise<T> {
    if (signal.aborted) throw abortError(signal.reason);
    const r = await call(this.#o.shutdown ?? signal);
    if (signal.aborted) throw abortError(signal.reason);
    return r;
  }

  #resize(pod: Pod, observed: ObservedPod, signal: AbortSignal): Promise<boolean> {
    const podIP = observed.sandboxes[0]?.ips[0];
    const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
    const stop = (p: Pod, id: string, spec: Container, message: string): Promise<void> =>
      this.#stop(p, { id, name: spec.name, running: true, spec, fieldPath: `spec.containers{${spec.name}}`, message }, grace, podIP, signal);
    const { runtime, allocation, podCgroups, events, nodeMemoryBytes } = this.#o;
    return actuateResize(pod, observed, { runtime, allocation: allocation!, podCgroups, events, nodeMemoryBytes, stop }, signal);
  }

  #stop(pod: Pod, c: ContainerToStop, graceS: number, podIP: string | undefined, signal: AbortSignal, zeroMeansNow = false): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const claimPreStop = (id: string): boolean => {
      let ran = this.#preStopped.get(uid);
      if (!ran) this.#preStopped.set(uid, (ran = new Set()));
      if (ran.has(id)) return false;
      ran.add(id);
      return true;
    };
    return stopContainer(this.#stopDeps, pod, c, { graceS, podIP, signal, claimPreStop, zeroMeansNow }, this.#o.runtimeRequestTimeoutMs);
  }

  #imageEvents(pod: Pod, fieldPath: string) {
    const ev = this.#o.events;
    return {
      pulling: (image: string) => ev.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`, fieldPath),
      pulled: (_image: string, message: string) => ev.event(pod, 'Normal', 'Pulled', message, fieldPath),
      failed: (_image: string, reason: string, message: string) => ev.event(pod, 'Warning', reason, message, fieldPath),
    };
  }

  /**
   * Stops every running container and then every sandbox (the runtime runs CNI DEL). Idempotent.
   * App containers stop concurrently, each after its preStop hook, within `gracePeriodS` counted
   * from now (container-stop.ts); then the sidecars (init containers with restartPolicy Always)
   * one at a time in reverse spec order, with what is left of the grace period, so they serve the
   * app containers to their end as kubelet does. `pod` may be a stand-in built from CRI labels for
   * orphans (no spec, so no hooks, and nothing is a sidecar).
   */
  killPod(pod: Pod, observed: ObservedPod, gracePeriodS: number, signal: AbortSignal): Promise<void> {
    return this.#killPod(pod, observed, gracePeriodS, signal, true);
  }

  /** `zeroMeansNow`: a grace period of 0 is a forced deletion (pod termination), not a minimum. */
  async #killPod(pod: Pod, observed: ObservedPod, gracePeriodS: number, signal: AbortSignal, zeroMeansNow: boolean): Promise<void> {
    const grace = Math.max(0, Math.floor(gracePeriodS));
    const started = this.#o.clock.monotonic();
    const live = observed.containers.filter((c) => c.state === 'running' || c.state === 'created' || c.state === 'unknown');
    const podIP = observed.sandboxes[0]?.ips[0];
    const inits = pod.spec?.initContainers ?? [];
    const sidecarIndex = (c: (typeof live)[number]): number => (c.type === 'init' ? inits.findIndex((x) => x.name === c.name && isSidecar(x)) : -1);
    const stop = (c: (typeof live)[number], graceS: number): Promise<void> => {
      const list = c.type === 'init' ? inits : c.type === 'ephemeral' ? pod.spec?.ephemeralContainers : pod.spec?.containers;
      const spec = list?.find((x) => x.name === c.name);
      const fieldPath = `spec.${listOf(c.type)}{${c.name}}`;
      return this.#stop(pod, { id: c.id, name: c.name, running: c.state === 'running', spec, fieldPath }, graceS, podIP, signal, zeroMeansNow);
    };
    await Promise.all(live.filter((c) => sidecarIndex(c) < 0).map((c) => stop(c, grace)));
    const sidecars = live.filter((c) => sidecarIndex(c) >= 0).sort((a, b) => sidecarIndex(b) - sidecarIndex(a));
    for (const c of sidecars) {
      const left = grace - Math.floor((this.#o.clock.monotonic() - started) / 1000);
      // A forced deletion stays immediate; otherwise kubelet's minimum applies (container-stop.ts).
      await stop(c, Math.max(0, left));
    }
    for (const s of observed.sandboxes) {
      try {
        await this.#o.runtime.stopPodSandbox({ podSandboxId: s.id }, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
    }
  }

  /** Removes the pod's containers, sandboxes, volumes and log directory. Call after killPod. Idempotent. */
  async removePod(pod: Pod, observed: ObservedPod, signal: AbortSignal): Promise<void> {
    const opts = { signal, timeoutMs: Math.min(CLEANUP_MS, this.#o.runtimeRequestTimeoutMs) };
    for (const c of observed.containers) {
      await this.#o.runtime.removeContainer({ containerId: c.id }, opts).catch((err: unknown) => {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      });
    }
    for (const s of observed.sandboxes) {
      await this.#o.runtime.removePodSandbox({ podSandboxId: s.id }, opts).catch((err: unknown) => {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      });
    }
    // An orphan's stand-in carries what CRI labels said: only a UID that is one path element is
    // joined into a path to remove (housekeeping leaves other entries alone too).
    if (isSafePodUid(pod.metadata.uid)) {
      // Unmounting gets its own deadline: half-unmounted volumes would keep the directory.
      await removePodDir(this.#o.paths.rootDir, pod.metadata.uid, this.#volumes.mounter, AbortSignal.timeout(CLEANUP_MS));
      this.#o.tokens?.forget(pod.metadata.uid);
      const { name, namespace } = pod.metadata;
      const element = `${namespace}_${name}_${pod.metadata.uid}`;
      if (name && namespace && !element.includes('/')) await rm(podLogDir(pod, this.#o.paths.podLogsDir), { recursive: true, force: true });
    }
    if (signal.aborted) throw new AgentError('ERR_DEADLINE_EXCEEDED', 'pod removal interrupted');
  }
}
