/**
 * Runtime GC: carries out gc-plan.ts against CRI, one pass per housekeeping period.
 *
 *   plan (from the PLEG's view) ─▶ containers: [StopContainer if unknown] ─▶ RemoveContainer
 *                               ─▶ sandboxes of pods whose container removals all succeeded:
 *                                  StopPodSandbox (the runtime runs CNI DEL: the pod's address
 *                                  and host-local lease are released) ─▶ RemovePodSandbox
 *
 * Every removal is logged once (`Garbage collected container|sandbox`, with its reason) and, when a
 * source still has the pod, recorded as a `GarbageCollected` event on it. Something already gone
 * (ERR_NOT_FOUND: a pod worker removed it meanwhile) is not logged. A failed removal is warned
 * about once per object and retried on the next pass; a sandbox is never removed while one of its
 * pod's container removals failed (containerd's RemovePodSandbox would take that container along,
 * unlogged).
 *
 * Concurrency: `Clock.every` never overlaps passes. Pod workers may act on the same pod at the same
 * time; every call here tolerates the object being gone, and a worker's removals tolerate ours.
 */
import { Semaphore, describeError, hasCode, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { ObservedPod } from '../kubecontainer/observed.js';
import type { PodEventSink } from '../kubecontainer/events.js';
import { DEFAULT_GC_POLICY, describeReason, planGc, type ContainerRemoval, type GcPolicy, type SandboxRemoval } from './gc-plan.js';

export interface RuntimeGcOptions {
  runtime: Pick<RuntimeService, 'stopContainer' | 'removeContainer' | 'stopPodSandbox' | 'removePodSandbox'>;
  /** The PLEG: its view is what is planned from; it relists after removals. */
  pleg: { all(): ReadonlyMap<string, ObservedPod>; relistSoon(): void };
  log: Logger;
  events: PodEventSink;
  /** The pod a source still has under this UID (for the event), else undefined. */
  pod(uid: string): Pod | undefined;
  /** No source wants the pod and no worker has it; false until every source was seen. */
  podGone(uid: string): boolean;
  now(): number;
  policy?: GcPolicy;
}

export interface RuntimeGcResult {
  containers: number;
  sandboxes: number;
}

const SHORT_ID = 13;
const SANDBOX_CONCURRENCY = 4;

export class RuntimeGc {
  readonly #o: RuntimeGcOptions;
  /** IDs whose failed removal was already warned about. */
  #warned = new Set<string>();

  constructor(o: RuntimeGcOptions) {
    this.#o = o;
  }

  /** One pass. Returns how many containers and sandboxes it removed. */
  async collect(signal: AbortSignal): Promise<RuntimeGcResult> {
    const { pleg } = this.#o;
    const view = pleg.all();
    const plan = planGc({ pods: view.values(), policy: this.#o.policy ?? DEFAULT_GC_POLICY, now: this.#o.now(), podGone: (uid) => this.#o.podGone(uid) });
    const result: RuntimeGcResult = { containers: 0, sandboxes: 0 };
    const failedPods = new Set<string>();
    for (const r of plan.containers) {
      if (await this.#removeContainer(r, signal)) result.containers++;
      else failedPods.add(r.pod.uid);
    }
    // Sandboxes a few at a time: each StopPodSandbox waits for the runtime's CNI DEL.
    const limit = new Semaphore(SANDBOX_CONCURRENCY);
    await Promise.all(
      plan.sandboxes
        .filter((r) => !failedPods.has(r.pod.uid))
        .map((r) => limit.use(async () => {
          if (await this.#removeSandbox(r, signal)) result.sandboxes++;
        })),
    );
    // Warnings are remembered only for what still exists.
    const present = new Set<string>();
    for (const p of view.values()) for (const x of [...p.sandboxes, ...p.containers]) present.add(x.id);
    this.#warned = new Set([...this.#warned].filter((id) => present.has(id)));
    if (result.containers + result.sandboxes > 0) pleg.relistSoon();
    return result;
  }

  /** True when the container is gone (removed now, or already). */
  async #removeContainer(r: ContainerRemoval, signal: AbortSignal): Promise<boolean> {
    const { runtime } = this.#o;
    const c = r.container;
    try {
      // A container in an unknown state may still run: stop it first (kubelet does the same).
      if (c.state === 'unknown') await runtime.stopContainer({ containerId: c.id, timeout: 0 }, { signal });
      await runtime.removeContainer({ containerId: c.id }, { signal });
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) return true;
      if (signal.aborted) throw err;
      this.#warnOnce(c.id, { ...podFields(r.pod), containerId: c.id, container: c.name, reason: r.reason, err: describeError(err) }, 'Container garbage collection failed');
      return false;
    }
    this.#o.log.info({ ...podFields(r.pod), containerId: c.id, container: c.name, state: c.state, attempt: c.restartCount, reason: r.reason }, 'Garbage collected container');
    const pod = this.#o.pod(r.pod.uid);
    if (pod) {
      const list = c.type === 'init' ? 'initContainers' : 'containers';
      this.#o.events.event(pod, 'Normal', 'GarbageCollected', `Removed ${c.state} container ${c.name} (${c.id.slice(0, SHORT_ID)}): ${describeReason(r.reason)}`, `spec.${list}{${c.name}}`);
    }
    return true;
  }

  async #removeSandbox(r: SandboxRemoval, signal: AbortSignal): Promise<boolean> {
    const { runtime } = this.#o;
    const s = r.sandbox;
    try {
      // The network first: a sandbox the runtime kept after a failed teardown still holds it.
      await runtime.stopPodSandbox({ podSandboxId: s.id }, { signal });
      await runtime.removePodSandbox({ podSandboxId: s.id }, { signal });
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) return false;
      if (signal.aborted) throw err;
      this.#warnOnce(s.id, { ...podFields(r.pod), sandboxId: s.id, reason: r.reason, err: describeError(err) }, 'Sandbox garbage collection failed');
      return false;
    }
    this.#o.log.info({ ...podFields(r.pod), sandboxId: s.id, attempt: s.attempt, reason: r.reason }, 'Garbage collected sandbox');
    const pod = this.#o.pod(r.pod.uid);
    if (pod) this.#o.events.event(pod, 'Normal', 'GarbageCollected', `Removed sandbox ${s.id.slice(0, SHORT_ID)}: ${describeReason(r.reason)}`);
    return true;
  }

  #warnOnce(id: string, fields: Record<string, unknown>, msg: string): void {
    if (this.#warned.has(id)) return;
    this.#warned.add(id);
    this.#o.log.warn(fields, msg);
  }
}

function podFields(p: ObservedPod): { pod: string; podUID: string } {
  return { pod: `${p.namespace}/${p.name}`, podUID: p.uid };
}
