/**
 * The API PodStatus of a pod, computed from the desired pod, what the runtime reports and the
 * last start failures (kubelet `generateAPIPodStatus`, `convertToAPIContainerStatuses`, `getPhase`).
 * Pure: the clock reading is an argument. Table-tested in pod-status.test.ts.
 */
import { podQOSClass, rfc3339, type Container, type ContainerState, type ContainerStatus, type Pod, type PodCondition, type PodPhase, type PodStatus } from '@nodelet/api/agent';
import { initContainersDone, isSidecar, podSandboxChanged, shouldContainerBeRestarted } from '../kubecontainer/helpers.js';
import type { ObservedContainer, ObservedPod } from '../kubecontainer/observed.js';
import type { ContainerType } from '../kubecontainer/labels.js';
import type { ProbeView } from '../prober/results.js';

/** Why a container could not be started at the last sync (kubelet's reason cache). */
export interface StartFailure {
  /** Waiting reason: ErrImagePull, ImagePullBackOff, CrashLoopBackOff, CreateContainerConfigError, … */
  reason: string;
  message: string;
}

export interface PodStatusInput {
  pod: Pod;
  observed: ObservedPod;
  /** Keyed by container name. */
  failures: ReadonlyMap<string, StartFailure>;
  hostIP: string;
  /** CRI runtime name for containerID URIs, e.g. "containerd". */
  runtimeName: string;
  now: number;
  /** The pod is being torn down: once nothing runs, its phase is terminal whatever the restart policy. */
  terminating?: boolean;
  /** Probe results: readiness and startup gate `ready`/`started`. Without them a container that declares such a probe is never ready. */
  probes?: ProbeView;
}

const iso = (ms: number | undefined): string | undefined => (ms ? rfc3339(ms) : undefined);

function terminatedState(c: ObservedContainer, runtimeName: string): ContainerState {
  const exitCode = c.exitCode ?? 0;
  const reason = c.reason || (exitCode === 0 ? 'Completed' : 'Error');
  return {
    terminated: {
      exitCode,
      reason,
      ...(c.message ? { message: c.message } : {}),
      startedAt: iso(c.startedAt),
      finishedAt: iso(c.finishedAt),
      containerID: `${runtimeName}://${c.id}`,
    },
  };
}

function containerStatus(
  input: PodStatusInput,
  spec: Container,
  type: ContainerType,
  defaultWaiting: string,
): ContainerStatus {
  const all = input.observed.containers.filter((c) => c.name === spec.name && c.type === type);
  const [latest, previous] = all;
  const status: ContainerStatus = {
    name: spec.name,
    state: { waiting: { reason: defaultWaiting } },
    ready: false,
    restartCount: latest?.restartCount ?? 0,
    image: spec.image ?? '',
    imageID: latest?.imageRef ?? '',
    started: false,
  };
  if (latest) {
    status.containerID = `${input.runtimeName}://${latest.id}`;
    if (latest.state === 'running') {
      status.state = { running: { startedAt: iso(latest.startedAt) } };
      // A container with a readiness (or startup) probe is not ready until the probe passed; sidecars are probed too.
      const probed = (type === 'regular' || isSidecar(spec)) && input.probes;
      status.started = probed ? input.probes!.started(latest.id, !!spec.startupProbe) : true;
      // Ephemeral containers are never ready (kubelet): they do not serve the pod.
      status.ready = probed ? input.probes!.ready(latest.id, !!spec.readinessProbe, !!spec.startupProbe) : (type === 'init' && !isSidecar(spec)) || (type !== 'ephemeral' && !spec.readinessProbe && !spec.startupProbe);
    } else if (latest.state === 'exited' || latest.state === 'unknown') {
      status.state = terminatedState(latest, input.runtimeName);
    } else {
      status.state = { waiting: { reason: 'ContainerCreating' } };
    }
    if (previous && previous.state === 'exited') status.lastState = terminatedState(previous, input.runtimeName);
  }
  // A container that will be started again shows why it is not running yet.
  const failure = input.failures.get(spec.name);
  // An ephemeral container is started once: a failure shows only until it was created.
  const restarts = type === 'ephemeral' ? !latest : isSidecar(spec) || (type === 'init' ? !(latest?.state === 'exited' && latest.exitCode === 0) && shouldContainerBeRestarted(input.pod, latest) : shouldContainerBeRestarted(input.pod, latest));
  if (failure && restarts) {
    if (status.state?.terminated) status.lastState = status.state;
    status.state = { waiting: { reason: failure.reason, message: failure.message } };
  }
  return status;
}

/**
 * kubelet `getPhase`. Sidecars (restartable init containers) keep the pod Pending only until they
 * have started, and only before any app container ran; a running one counts as running, an exited
 * one not at all: the app containers alone decide completion.
 */
export function podPhase(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], podIsTerminal = false): PodPhase {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => c.name));
  const appStarted = regular.some((s) => s.containerID !== undefined);
  let pendingInit = 0;
  let failedInit = 0;
  let sidecarsRunning = 0;
  for (const s of init) {
    if (sidecars.has(s.name)) {
      if (s.state?.running) sidecarsRunning++;
      const pending = s.state?.running ? !s.started : !s.state?.terminated && !s.lastState?.terminated;
      if (pending && !appStarted) pendingInit++;
      continue;
    }
    if (s.state?.terminated) {
      if (s.state.terminated.exitCode === 0) continue;
      failedInit++;
    } else if (s.state?.running) pendingInit++;
    else if (s.lastState?.terminated && s.lastState.terminated.exitCode !== 0) failedInit++;
    else pendingInit++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  let running = sidecarsRunning;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of regular) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState?.terminated) {
      stopped++;
      if (s.lastState.terminated.exitCode === 0) succeeded++;
    } else waiting++;
  }
  if (podIsTerminal && running === 0) return stopped > 0 && stopped === succeeded && waiting === 0 ? 'Succeeded' : 'Failed';
  if (pendingInit > 0 || failedInit > 0) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(prev: PodStatus | undefined, type: string, ok: boolean, now: number, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = prev?.conditions?.find((c) => c.type === type);
  const c: PodCondition = { type, status, lastProbeTime: null, lastTransitionTime: old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : iso(now) };
  if (!ok && reason) c.reason = reason;
  if (!ok && message) c.message = message;
  return c;
}

/**
 * Ready (kubelet GeneratePodReadyCondition): as ContainersReady while that is not True; then
 * every readiness gate's condition, set by others in the pod's status, must be True as well.
 */
function readyCondition(pod: Pod, prev: PodStatus | undefined, containersReady: boolean, now: number, reason: string, message: string | undefined): PodCondition {
  if (!containersReady) return condition(prev, 'Ready', false, now, reason, message);
  const unready: string[] = [];
  for (const g of pod.spec?.readinessGates ?? []) {
    const c = prev?.conditions?.find((x) => x.type === g.conditionType);
    if (!c) unready.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
    else if (c.status !== 'True') unready.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`);
  }
  return unready.length ? condition(prev, 'Ready', false, now, 'ReadinessGatesNotReady', unready.join(', ')) : condition(prev, 'Ready', true, now);
}

/** The pod conditions the agent computes on every sync (kubelet PodConditionByKubelet). */
const KUBELET_CONDITIONS: ReadonlySet<string> = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers']);

/**
 * The status to compute from: the agent's latest (`cached`), with the conditions others own
 * (readiness gates, an eviction's DisruptionTarget) as the API has them now, as kubelet's status
 * manager merges them; a condition only the agent has is kept.
 */
export function withApiConditions(cached: PodStatus | undefined, api: PodStatus | undefined): PodStatus | undefined {
  if (!cached) return api;
  const foreign = (api?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type));
  if (foreign.length === 0) return cached;
  const types = new Set(foreign.map((c) => c.type));
  return { ...cached, conditions: [...(cached.conditions ?? []).filter((c) => !types.has(c.type)), ...foreign] };
}

export const DEADLINE_EXCEEDED_REASON = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/**
 * Milliseconds left of the pod's `activeDeadlineSeconds`, counted from its status startTime as
 * kubelet counts it (≤ 0: past it); undefined when the pod has no deadline or no start time.
 */
export function activeDeadlineRemainingMs(pod: Pod, startTime: string | undefined, now: number): number | undefined {
  const limit = pod.spec?.activeDeadlineSeconds;
  if (limit === undefined || limit === null || !startTime) return undefined;
  const started = Date.parse(startTime);
  if (!Number.isFinite(started)) return undefined;
  return started + limit * 1000 - now;
}

export function computePodStatus(input: PodStatusInput): PodStatus {
  const { pod, observed, now } = input;
  const prev = pod.status;
  const spec = pod.spec!;
  const hasInit = (spec.initContainers ?? []).length > 0;
  const probes = input.probes;
  const initDone = initContainersDone(pod, observed, probes ? (id, hasStartup) => probes.started(id, hasStartup) : undefined);
  const defaultWaiting = hasInit ? 'PodInitializing' : 'ContainerCreating';
  const initStatuses = (spec.initContainers ?? []).map((c) => containerStatus(input, c, 'init', defaultWaiting));
  const statuses = spec.containers.map((c) => containerStatus(input, c, 'regular', defaultWaiting));
  const ephemeral = (spec.ephemeralContainers ?? []).map((c) => containerStatus(input, c, 'ephemeral', 'ContainerCreating'));
  let phase = podPhase(pod, initStatuses, statuses, input.terminating);
  // Terminal phases never go back (kubelet status manager).
  if (prev?.phase === 'Succeeded' || prev?.phase === 'Failed') phase = prev.phase;

  const sb = podSandboxChanged(pod, observed);
  const sandboxReady = !sb.changed;
  const ips = spec.hostNetwork ? [input.hostIP] : sandboxReady ? (observed.sandboxes[0]?.ips ?? []) : [];
  // Sidecars count for readiness (kubelet's ContainersReady includes restartable init containers).
  const sidecarNames = new Set((spec.initContainers ?? []).filter(isSidecar).map((c) => c.name));
  const sidecarStatuses = initStatuses.filter((s) => sidecarNames.has(s.name));
  const unready = [...sidecarStatuses, ...statuses].filter((s) => !s.ready).map((s) => s.name);
  const incompleteInit = initStatuses.filter((s) => (sidecarNames.has(s.name) ? !(s.state?.running && s.started) : s.state?.terminated?.exitCode !== 0)).map((s) => s.name);
  const completed = phase === 'Succeeded';
  const readyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions: PodCondition[] = [
    condition(prev, 'PodReadyToStartContainers', sandboxReady, now),
    condition(prev, 'Initialized', initDone || completed, now, 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
    readyCondition(pod, prev, !completed && unready.length === 0, now, readyReason, readyMessage),
    condition(prev, 'ContainersReady', !completed && unready.length === 0, now, readyReason, readyMessage),
    prev?.conditions?.find((c) => c.type === 'PodScheduled') ?? condition(prev, 'PodScheduled', true, now),
    // Conditions others own (an eviction's DisruptionTarget, readiness gates) or the agent set once
    // (DisruptionTarget on a node shutdown) are kept, as kubelet keeps them: a status write
    // replaces the whole list.
    ...(prev?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type)),
  ];
  const status: PodStatus = {
    phase,
    conditions,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    startTime: prev?.startTime ?? iso(now),
    initContainerStatuses: hasInit ? initStatuses : undefined,
    containerStatuses: statuses,
    ...(ephemeral.length > 0 ? { ephemeralContainerStatuses: ephemeral } : {}),
    qosClass: podQOSClass(spec),
  };
  // Past activeDeadlineSeconds the pod fails (kubelet's active deadline handler); its containers
  // are then killed because the phase is terminal.
  const left = activeDeadlineRemainingMs(pod, status.startTime, now);
  if (left !== undefined && left <= 0 && phase !== 'Succeeded') {
    status.phase = 'Failed';
    status.reason = DEADLINE_EXCEEDED_REASON;
    status.message = DEADLINE_EXCEEDED_MESSAGE;
  }
  if (ips.length > 0) {
    status.podIP = ips[0];
    status.podIPs = ips.map((ip) => ({ ip }));
  }
  return status;
}

/** True when the pod reached a terminal phase and will not run again. */
export function isTerminalPhase(phase: PodPhase | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
