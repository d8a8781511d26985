/**
 * `computePodActions`: the pure diff between a desired pod and what the runtime reports
 * (kubelet `kuberuntime_manager.go` computePodActions). syncPod performs the result in order:
 *
 *   1 kill the pod (all containers + sandbox) if `killPod`
 *   2 kill `containersToKill`
 *   3 create a sandbox if `createSandbox` (attempt = `attempt`)
 *   4 start init container `nextInitContainer` (one at a time, in order)
 *   5 restart `sidecarsToStart`, then start `containersToStart` (backoff is checked per container
 *     at start time)
 *
 * Native sidecars (init containers with `restartPolicy: Always`) start in init order; the next
 * init container waits until the sidecar is started (running, its startupProbe passed). They keep
 * running beside the app containers, are restarted whenever they exit whatever the pod's
 * restartPolicy, and count neither for the pod's completion nor its phase once it has run.
 *   6 start `ephemeralToStart`: ephemeral containers that never ran in the current sandbox (once each)
 *
 * No I/O, no clock: table-tested in pod-actions.test.ts.
 */
import type { Container, Pod } from '@nodelet/api/agent';
import { containerHash } from '../kubecontainer/labels.js';
import { initContainersDone, isSidecar, podSandboxChanged, restartPolicy, shouldContainerBeRestarted, succeeded, type ProbeStarted } from '../kubecontainer/helpers.js';
import { latestContainer, type ObservedPod } from '../kubecontainer/observed.js';

export interface ContainerToKill {
  id: string;
  name: string;
  reason: string;
  /** Set when a liveness or startup probe asked for the kill (the Killing event says so). */
  probe?: 'liveness' | 'startup';
  /** `init` for a sidecar; regular otherwise. */
  type?: 'init';
}

/** Which probe wants a running container (by ID) killed (the prober's results; none by default). */
export type ProbeFailed = (containerId: string) => 'liveness' | 'startup' | undefined;

export interface PodActions {
  /** Stop every container and the sandbox(es) before anything else. */
  killPod: boolean;
  createSandbox: boolean;
  /** The ready sandbox to put containers in (when not creating one). */
  sandboxId?: string;
  /** Attempt number for a new sandbox (previous attempt + 1). */
  attempt: number;
  /** Index into spec.initContainers of the init container to start now. */
  nextInitContainer?: number;
  /** An init container failed and restartPolicy is Never: the pod has failed. */
  initFailed: boolean;
  /** Indices into spec.initContainers of sidecars that exited after initialization: started again. */
  sidecarsToStart: number[];
  /** Indices into spec.containers. */
  containersToStart: number[];
  containersToKill: ContainerToKill[];
  /** Indices into spec.ephemeralContainers: never started yet, to start in the running sandbox. */
  ephemeralToStart: number[];
}

export function computePodActions(pod: Pod, observed: ObservedPod, probeFailed: ProbeFailed = () => undefined, started: ProbeStarted = () => true): PodActions {
  const spec = pod.spec;
  const containers: Container[] = spec?.containers ?? [];
  const inits: Container[] = spec?.initContainers ?? [];
  const policy = restartPolicy(pod);
  const sb = podSandboxChanged(pod, observed);
  const actions: PodActions = {
    killPod: sb.changed,
    createSandbox: sb.changed,
    attempt: sb.attempt,
    initFailed: false,
    sidecarsToStart: [],
    containersToStart: [],
    containersToKill: [],
    ephemeralToStart: [],
  };
  if (!sb.changed && sb.sandbox) actions.sandboxId = sb.sandbox.id;

  if (sb.changed) {
    // A pod that never restarts does not get a second sandbox once its containers have run.
    if (policy === 'Never' && sb.attempt !== 0 && observed.containers.length > 0) {
      actions.createSandbox = false;
      return actions;
    }
    const toStart = containers
      .map((c, i) => [c, i] as const)
      .filter(([c]) => !(policy === 'OnFailure' && succeeded(latestContainer(observed, c.name, 'regular'))))
      .map(([, i]) => i);
    if (toStart.length === 0) {
      actions.createSandbox = false;
      return actions;
    }
    // A new sandbox runs the init containers again, from the first.
    if (inits.length > 0) {
      actions.nextInitContainer = 0;
      return actions;
    }
    actions.containersToStart = toStart;
    return actions;
  }

  // Init containers run one at a time, in order; app containers wait for all of them.
  if (!initContainersDone(pod, observed, started)) {
    for (let i = 0; i < inits.length; i++) {
      const c = inits[i]!;
      const st = latestContainer(observed, c.name, 'init');
      if (isSidecar(c)) {
        if (st?.state !== 'running') {
          actions.nextInitContainer = i;
          return actions;
        }
        const probe = probeFailed(st.id);
        if (probe) {
          actions.containersToKill.push({ id: st.id, name: c.name, type: 'init', reason: `Container ${c.name} failed ${probe} probe, will be restarted`, probe });
          return actions;
        }
        // The next init container waits until this sidecar has started.
        if (!started(st.id, !!c.startupProbe)) return actions;
        continue;
      }
      if (succeeded(st)) continue;
      if (st?.state === 'running') return actions;
      if (st && st.state === 'exited' && policy === 'Never') {
        actions.initFailed = true;
        actions.killPod = true;
        return actions;
      }
      actions.nextInitContainer = i;
      return actions;
    }
  }

  let keep = 0;
  containers.forEach((c, i) => {
    const st = latestContainer(observed, c.name, 'regular');
    if (!st || st.state !== 'running') {
      if (shouldContainerBeRestarted(pod, st)) actions.containersToStart.push(i);
      return;
    }
    if (st.hash && st.hash !== containerHash(c)) {
      actions.containersToKill.push({ id: st.id, name: c.name, reason: `container "${c.name}" definition changed, will be restarted` });
      if (policy !== 'Never') actions.containersToStart.push(i);
      return;
    }
    // kubelet: a failed liveness/startup probe kills the container; restartPolicy decides the rest.
    const probe = probeFailed(st.id);
    if (probe) {
      actions.containersToKill.push({ id: st.id, name: c.name, reason: `Container ${c.name} failed ${probe} probe, will be restarted`, probe });
      if (policy !== 'Never') actions.containersToStart.push(i);
      return;
    }
    keep++;
  });
  // Running containers the spec no longer names (after a spec change) are killed too.
  const names = new Set(containers.map((c) => c.name));
  for (const c of observed.containers) {
    if (c.type === 'regular' && c.state === 'running' && !names.has(c.name)) {
      actions.containersToKill.push({ id: c.id, name: c.name, reason: `container "${c.name}" is not in the pod spec` });
    }
  }
  // Nothing left to run: the pod is done, its sidecars are stopped with it (killPod stops them last).
  if (keep === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    return actions;
  }
  // Sidecars beside the app containers: restarted whenever they exit, killed when a probe asks.
  inits.forEach((c, i) => {
    if (!isSidecar(c)) return;
    const st = latestContainer(observed, c.name, 'init');
    if (st?.state !== 'running') {
      actions.sidecarsToStart.push(i);
      return;
    }
    const probe = probeFailed(st.id);
    if (probe) actions.containersToKill.push({ id: st.id, name: c.name, type: 'init', reason: `Container ${c.name} failed ${probe} probe, will be restarted`, probe });
  });
  // kubelet: an ephemeral container starts once, in the running sandbox, after init is done; it is
  // never restarted and a new sandbox does not run it again.
  (spec?.ephemeralContainers ?? []).forEach((c, i) => {
    if (!latestContainer(observed, c.name, 'ephemeral')) actions.ephemeralToStart.push(i);
  });
  return actions;
}
