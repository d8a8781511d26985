/**
 * What the agent's folders decide alike about a pod's containers, from its spec and what the runtime
 * reports (kubelet `kubecontainer/helpers.go` and the sandbox check of `kuberuntime`): whether a
 * container is a sidecar, restarts, or has finished initialising, and whether the pod needs a new
 * sandbox. `runtime/pod-actions.ts` acts on them; the status computation and the prober read them.
 *
 * No I/O, no clock: tested through pod-actions.test.ts and sidecars.test.ts.
 */
import type { Container, Pod } from '@nodelet/api/agent';
import { latestContainer, type ObservedContainer, type ObservedPod, type ObservedSandbox } from './observed.js';

/** Whether a running container has started (its startupProbe passed; true without one). */
export type ProbeStarted = (containerId: string, hasStartupProbe: boolean) => boolean;

/** An init container with `restartPolicy: Always`: a native sidecar. */
export function isSidecar(c: Container): boolean {
  return c.restartPolicy === 'Always';
}

/** The pod's restartPolicy (`Always` when unset). */
export function restartPolicy(pod: Pod): 'Always' | 'OnFailure' | 'Never' {
  return pod.spec?.restartPolicy ?? 'Always';
}

/** kubelet `ShouldContainerBeRestarted` for the latest status of a container. */
export function shouldContainerBeRestarted(pod: Pod, st: ObservedContainer | undefined): boolean {
  if (!st) return true;
  if (st.state === 'running') return false;
  if (st.state === 'unknown' || st.state === 'created') return true;
  const policy = restartPolicy(pod);
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && st.exitCode === 0) return false;
  return true;
}

/** The container exited with code 0. */
export function succeeded(st: ObservedContainer | undefined): boolean {
  return st?.state === 'exited' && st.exitCode === 0;
}

/**
 * Whether a (new) sandbox is needed: none exists, more than one is ready, the newest is not ready,
 * or a non-host-network sandbox has no IP (kubelet `podSandboxChanged`).
 */
export function podSandboxChanged(pod: Pod, observed: ObservedPod): { changed: boolean; attempt: number; sandbox?: ObservedSandbox } {
  const [newest] = observed.sandboxes;
  if (!newest) return { changed: true, attempt: 0 };
  const ready = observed.sandboxes.filter((s) => s.ready).length;
  const next = newest.attempt + 1;
  if (ready > 1) return { changed: true, attempt: next, sandbox: newest };
  if (!newest.ready) return { changed: true, attempt: next, sandbox: newest };
  if (!pod.spec?.hostNetwork && newest.ips.length === 0) return { changed: true, attempt: next, sandbox: newest };
  return { changed: false, attempt: newest.attempt, sandbox: newest };
}

/** A sidecar counts as initialized once it runs and has started. */
function sidecarStarted(c: Container, st: ObservedContainer | undefined, started: ProbeStarted): boolean {
  return st?.state === 'running' && started(st.id, !!c.startupProbe);
}

/**
 * True once every init container has succeeded (a sidecar: runs and has started), or a regular
 * container has already run.
 */
export function initContainersDone(pod: Pod, observed: ObservedPod, started: ProbeStarted = () => true): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;
  if (observed.containers.some((c) => c.type === 'regular')) return true;
  return inits.every((c) => {
    const st = latestContainer(observed, c.name, 'init');
    return isSidecar(c) ? sidecarStarted(c, st, started) : succeeded(st);
  });
}
