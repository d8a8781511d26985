/**
 * Pod resource requests and node allocatable, in the integer units kube-scheduler compares:
 * milli-CPU and bytes. Mirrors component-helpers `resource.PodRequests` (init containers: the
 * max rule, sidecars add to the running sum) and the scheduler's non-zero defaults for scoring.
 */
import type { Container, Node, Pod } from '@nodelet/api';
import { quantityMilli, quantityValue } from './quantity.js';

export interface Resources {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
}

export const zeroResources = (): Resources => ({ milliCPU: 0, memory: 0, ephemeralStorage: 0 });

/** Scheduler defaults for containers without a request, used only for scoring (upstream `schedutil`). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

function containerRequests(c: Container, nonZero: boolean): Resources {
  // The API server defaults requests to limits when only limits are set; apply the same rule so a
  // server that does not default still schedules like kube-apiserver + kube-scheduler.
  const req = { ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) };
  const cpu = req['cpu'];
  const mem = req['memory'];
  const eph = req['ephemeral-storage'];
  return {
    milliCPU: cpu !== undefined ? quantityMilli(cpu) : nonZero ? DEFAULT_MILLI_CPU_REQUEST : 0,
    memory: mem !== undefined ? quantityValue(mem) : nonZero ? DEFAULT_MEMORY_REQUEST : 0,
    ephemeralStorage: eph !== undefined ? quantityValue(eph) : 0,
  };
}

type StatusRequests = Readonly<Record<string, string | number>> | undefined;

/** What the agent reports of a container: its allocated requests and the requests it runs with. */
interface ContainerStatusRequests {
  allocatedResources?: StatusRequests;
  resources?: { requests?: StatusRequests } | null;
}

/** True when the agent said the pod's resize can never fit its node (condition PodResizePending, reason Infeasible). */
function resizeInfeasible(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'PodResizePending' && c.status === 'True' && c.reason === 'Infeasible');
}

/**
 * A container's requests during an in-place resize (component-helpers determineContainerReqs): the
 * largest of the spec's (unless the resize is Infeasible), the allocated and the actual requests,
 * so a node is never counted at less than what the pod holds or is about to hold.
 */
function resizedRequests(c: Container, spec: Resources, status: ContainerStatusRequests | undefined, infeasible: boolean): Resources {
  if (!status) return spec;
  const of = (list: StatusRequests): Resources => containerRequests({ name: c.name, resources: { requests: { ...(list ?? {}) } as Record<string, string> } } as Container, false);
  const held = max(of(status.allocatedResources), of(status.resources?.requests ?? undefined));
  return infeasible ? { ...max(held, { ...spec, milliCPU: 0, memory: 0 }) } : max(spec, held);
}

function add(a: Resources, b: Resources): Resources {
  return { milliCPU: a.milliCPU + b.milliCPU, memory: a.memory + b.memory, ephemeralStorage: a.ephemeralStorage + b.ephemeralStorage };
}

function max(a: Resources, b: Resources): Resources {
  return {
    milliCPU: Math.max(a.milliCPU, b.milliCPU),
    memory: Math.max(a.memory, b.memory),
    ephemeralStorage: Math.max(a.ephemeralStorage, b.ephemeralStorage),
  };
}

/**
 * What a pod needs on a node: the sum of its containers (plus sidecars), or the largest init
 * container step if that is bigger, plus the pod overhead. `nonZero` applies the scoring defaults.
 * A container being resized in place counts at the most it holds or asks for (resizedRequests).
 */
export function podRequests(pod: Pod, opts: { nonZero?: boolean } = {}): Resources {
  const nonZero = opts.nonZero ?? false;
  const spec = pod.spec;
  let running = zeroResources();
  const statuses = new Map<string, ContainerStatusRequests>((pod.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  const infeasible = resizeInfeasible(pod);
  for (const c of spec?.containers ?? []) running = add(running, resizedRequests(c, containerRequests(c, nonZero), statuses.get(c.name), infeasible));
  // Init containers run one at a time, each beside the sidecars started before it.
  let sidecars = zeroResources();
  let initPeak = zeroResources();
  for (const c of spec?.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      sidecars = add(sidecars, r);
      initPeak = max(initPeak, sidecars);
    } else {
      initPeak = max(initPeak, add(r, sidecars));
    }
  }
  let total = max(add(running, sidecars), initPeak);
  const overhead = (spec as { overhead?: Record<string, string> } | undefined)?.overhead;
  if (overhead) {
    total = add(total, {
      milliCPU: overhead['cpu'] ? quantityMilli(overhead['cpu']) : 0,
      memory: overhead['memory'] ? quantityValue(overhead['memory']) : 0,
      ephemeralStorage: overhead['ephemeral-storage'] ? quantityValue(overhead['ephemeral-storage']) : 0,
    });
  }
  return total;
}

export interface Allocatable extends Resources {
  pods: number;
}

/** `status.allocatable` (falling back to capacity, as a freshly registered node may lack it). */
export function nodeAllocatable(node: Node): Allocatable {
  const a = node.status?.allocatable ?? node.status?.capacity ?? {};
  return {
    milliCPU: a['cpu'] !== undefined ? quantityMilli(a['cpu']) : 0,
    memory: a['memory'] !== undefined ? quantityValue(a['memory']) : 0,
    ephemeralStorage: a['ephemeral-storage'] !== undefined ? quantityValue(a['ephemeral-storage']) : 0,
    pods: a['pods'] !== undefined ? quantityValue(a['pods']) : 0,
  };
}

export function addResources(a: Resources, b: Resources): Resources {
  return add(a, b);
}
