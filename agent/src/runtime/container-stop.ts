/**
 * Stopping one container the kubelet's way (kuberuntime_container.go killContainer):
 *
 *   Killing event ─▶ preStop hook (if any, grace > 0, container running, not run before)
 *                    │  bounded by the grace period; a failure is a FailedPreStopHook event only
 *                    ▼
 *   StopContainer(timeout = grace − whole seconds the hook took, at least 2 s) ─▶ SIGTERM … SIGKILL
 *
 * A grace period of 0 skips the hook; with `zeroMeansNow` (a forced deletion) it also stops at
 * once, otherwise the stop still gets 2 s. Callers run one
 * stop per container concurrently, so the preStop hooks of a pod run in parallel and each
 * container gets its own remaining grace (kubelet's killContainersWithSyncResult).
 */
import { hasCode, type Logger } from '@nodelet/base';
import type { Container, Pod } from '@nodelet/api/agent';
import { runLifecycleHook, type HookDeps } from './lifecycle-hooks.js';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { PodEventSink } from '../kubecontainer/events.js';

/** kubelet's minimumGracePeriodInSeconds: the least time a container gets after SIGTERM. */
export const MIN_STOP_GRACE_S = 2;

export interface ContainerStopDeps extends HookDeps {
  runtime: Pick<RuntimeService, 'execSync' | 'stopContainer'>;
  events: PodEventSink;
  log: Logger;
}

export interface ContainerToStop {
  id: string;
  name: string;
  /** Whether the runtime reports it running (only then does preStop run). */
  running: boolean;
  /** The container's spec, when the pod still has one (orphans have none: no hook). */
  spec?: Container;
  /** spec.containers{name} or spec.initContainers{name}. */
  fieldPath: string;
  /** The Killing event's message; default `Stopping container <name>`. */
  message?: string;
}

export interface StopOptions {
  /** Seconds, counted from now, for the hook and the stop together. */
  graceS: number;
  /**
   * A grace period of 0 is meant (a forced pod deletion): no hook, SIGKILL at once. Otherwise 0
   * means kubelet's minimum of 2 s like any short grace period (kills during a sync).
   */
  zeroMeansNow?: boolean;
  podIP?: string;
  signal: AbortSignal;
  /**
   * Called once before a container's preStop starts; returns false when the hook already ran
   * for this container (a shortened grace period restarts termination: the hook is not repeated).
   */
  claimPreStop?(containerId: string): boolean;
}

/**
 * Runs the preStop hook within `graceS` and returns the whole seconds it took (kubelet rounds
 * down). The hook is aborted when the grace period is over or `signal` aborts.
 */
export async function runPreStop(deps: ContainerStopDeps, pod: Pod, c: ContainerToStop, o: StopOptions): Promise<number> {
  const handler = c.spec?.lifecycle?.preStop;
  if (!handler || !c.spec) return 0;
  const start = deps.clock.monotonic();
  const hook = new AbortController();
  const onAbort = (): void => hook.abort(o.signal.reason);
  o.signal.addEventListener('abort', onAbort, { once: true });
  const run = runLifecycleHook(handler, { pod, container: c.spec, containerId: c.id, podIP: o.podIP }, deps, { timeoutS: o.graceS, signal: hook.signal }).then(
    (failure) => {
      if (failure === undefined) return;
      deps.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: c.name, failure }, 'PreStop hook failed');
      // The message stays in the agent's log: hook output may hold secrets (kubelet does the same).
      deps.events.event(pod, 'Warning', 'FailedPreStopHook', 'PreStopHook failed', c.fieldPath);
    },
    (err: unknown) => {
      if (!hook.signal.aborted) throw err;
    },
  );
  try {
    const timedOut = await Promise.race([run.then(() => false), deps.clock.sleep(o.graceS * 1000, hook.signal).then(() => true)]);
    if (timedOut) deps.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, container: c.name, graceS: o.graceS }, 'PreStop hook not completed in grace period');
  } catch (err) {
    if (!o.signal.aborted) throw err;
  } finally {
    hook.abort(new DOMException('preStop hook ended', 'AbortError'));
    o.signal.removeEventListener('abort', onAbort);
  }
  if (o.signal.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new DOMException('aborted', 'AbortError');
  return Math.floor((deps.clock.monotonic() - start) / 1000);
}

/** One container: Killing event, preStop, StopContainer with what is left of the grace period. */
export async function stopContainer(deps: ContainerStopDeps, pod: Pod, c: ContainerToStop, o: StopOptions, runtimeRequestTimeoutMs: number): Promise<void> {
  let grace = Math.max(0, Math.floor(o.graceS));
  if (c.running) deps.events.event(pod, 'Normal', 'Killing', c.message ?? `Stopping container ${c.name}`, c.fieldPath);
  if (grace > 0 && c.running && c.spec?.lifecycle?.preStop && (o.claimPreStop?.(c.id) ?? true)) grace -= await runPreStop(deps, pod, c, { ...o, graceS: grace });
  if (!(o.zeroMeansNow && Math.floor(o.graceS) <= 0)) grace = Math.max(MIN_STOP_GRACE_S, grace);
  try {
    await deps.runtime.stopContainer({ containerId: c.id, timeout: grace }, { signal: o.signal, timeoutMs: grace * 1000 + runtimeRequestTimeoutMs });
  } catch (err) {
    if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
  }
}
