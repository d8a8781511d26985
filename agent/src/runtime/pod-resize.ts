/**
 * Actuating an allocated in-place resize on running app containers (kubelet
 * computePodResizeAction / doPodResizeAction): a container whose changed resource has
 * `resizePolicy: RestartContainer` is stopped (the next sync starts it with the new resources);
 * the others get UpdateContainerResources. The KEP's order keeps the sum of the containers'
 * limits within the pod cgroup's at every step: container decreases, then the pod cgroup
 * (cm/pod-cgroups.ts), then container increases. A failure is reported (PodResizeInProgress,
 * reason Error, and a Warning event) and retried on the next sync.
 */
import { describeError } from '@nodelet/base';
import { podQOSClass, type Container, type Pod, type ResourceRequirements } from '@nodelet/api/agent';
import { linuxResources } from './container-config.js';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { ObservedPod } from '../kubecontainer/observed.js';
import type { PodEventSink } from '../kubecontainer/events.js';
import { parseQuantity } from '../util/quantity.js';

type Resources = ResourceRequirements | undefined;

/** The allocation manager's part the runtime uses (cm/pod-allocation.ts). */
export interface ResizeAllocation {
  acknowledged(uid: string, name: string, id: string): { known: boolean; resources: Resources };
  acknowledge(uid: string, name: string, id: string, resources: Resources): void;
  failed(uid: string, message: string): void;
  /** The cpu/memory resources whose request or limit differs ([] when equal as amounts). */
  changedResources(a: Resources, b: Resources): string[];
}

export interface ResizeDeps {
  runtime: RuntimeService;
  allocation: ResizeAllocation;
  podCgroups?: { ensure(pod: Pod): Promise<string> };
  events: PodEventSink;
  nodeMemoryBytes: number;
  /** Stops a running container gracefully (preStop, grace period) as the runtime's kills do. */
  stop(pod: Pod, id: string, container: Container, message: string): Promise<void>;
}

/** One running container whose acknowledged resources differ from the allocated ones. */
export interface ContainerResize {
  id: string;
  container: Container;
  /** Its resizePolicy asks for a restart for a resource that changed. */
  restart: boolean;
  /** A limit goes down (applied before the pod cgroup shrinks). */
  decrease: boolean;
}

const limitOf = (r: Resources, name: string): number => {
  const v = r?.limits?.[name];
  return v === undefined ? Infinity : parseQuantity(v);
};

/** The running app containers to resize (their latest instance each), with what each needs. */
export function resizeActions(pod: Pod, observed: ObservedPod, allocation: ResizeAllocation): ContainerResize[] {
  const uid = pod.metadata.uid!;
  const out: ContainerResize[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const running = observed.containers.find((o) => o.name === c.name && o.type === 'regular' && o.state === 'running');
    if (!running) continue;
    const ack = allocation.acknowledged(uid, c.name, running.id);
    // Unknown (the agent restarted): send the allocation once, never restart for it.
    if (!ack.known) {
      out.push({ id: running.id, container: c, restart: false, decrease: false });
      continue;
    }
    const diff = allocation.changedResources(ack.resources, c.resources);
    if (diff.length === 0) continue;
    const restart = diff.some((r) => c.resizePolicy?.some((p) => p.resourceName === r && p.restartPolicy === 'RestartContainer'));
    const decrease = diff.some((r) => limitOf(c.resources, r) < limitOf(ack.resources, r));
    out.push({ id: running.id, container: c, restart, decrease });
  }
  return out;
}

/** Applies the pod's allocated resources to its running containers; true when anything was done. */
export async function actuateResize(pod: Pod, observed: ObservedPod, deps: ResizeDeps, signal: AbortSignal): Promise<boolean> {
  const plan = resizeActions(pod, observed, deps.allocation);
  if (plan.length === 0) return false;
  const uid = pod.metadata.uid!;
  const qos = podQOSClass(pod.spec);
  const errors: string[] = [];
  for (const p of plan.filter((x) => x.restart)) {
    await deps.stop(pod, p.id, p.container, `Container ${p.container.name} resize requires restart`);
  }
  const update = async (p: ContainerResize): Promise<void> => {
    try {
      await deps.runtime.updateContainerResources({ containerId: p.id, linux: linuxResources(p.container, deps.nodeMemoryBytes, qos) }, { signal });
      deps.allocation.acknowledge(uid, p.container.name, p.id, p.container.resources);
    } catch (err) {
      if (signal.aborted) throw err;
      errors.push(`container "${p.container.name}": ${describeError(err)}`);
    }
  };
  const inPlace = plan.filter((x) => !x.restart);
  for (const p of inPlace.filter((x) => x.decrease)) await update(p);
  // A failed decrease leaves the pod cgroup as it is: the containers' sum could exceed a smaller one.
  if (errors.length === 0 && deps.podCgroups) {
    try {
      await deps.podCgroups.ensure(pod);
    } catch (err) {
      if (signal.aborted) throw err;
      errors.push(`pod cgroup: ${describeError(err)}`);
    }
  }
  for (const p of inPlace.filter((x) => !x.decrease)) await update(p);
  if (errors.length) {
    const message = `resize failed: ${errors.join('; ')}`;
    deps.allocation.failed(uid, message);
    deps.events.event(pod, 'Warning', 'ResizeError', message);
  }
  return true;
}
