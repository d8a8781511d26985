/**
 * The agent's steps of each pod journey (docs/tracing.md), recorded under the pod's traceparent
 * annotation the first time the agent starts the pod:
 *
 *   seen (pod config) ─agent.admit─▶ admitted ─▶ agent.sync (one per sync until the pod runs)
 *                                               ├ agent.volumes, agent.sandbox ─ cni.add
 *                                               └ per container: agent.image.pull|present, agent.container.create,
 *                                                 agent.container.start, agent.container.post_start
 *   last sync ─agent.observe─▶ every container seen running ─agent.probes─▶ Ready computed
 *             ─agent.status─▶ the status patch carrying Ready accepted
 *
 * Only pods seen Pending get a journey (not those found running after a restart of the agent),
 * and only their first start is traced: once Ready is written the journey is closed and later
 * syncs cost nothing. At most `maxPods` journeys are open (the oldest is dropped). Called from
 * the pod config, admission, the pod workers' syncs, the runtime, the CNI service and the status
 * manager; all synchronous, no I/O.
 */
import type { Pod, PodStatus } from '@nodelet/api/agent';
import { ATTR, podTraceParent, SPAN, type JourneyTracer, type ScopedTracer, type SpanAttributes, type SpanHandle, type SpanRecord, type TraceParent } from '@nodelet/api/tracing';

/** Syncs traced per journey at most (a pod that never starts retries forever). */
const MAX_SYNCS = 16;
const DEFAULT_MAX_PODS = 1024;

/** What the runtime records its steps through (pod-runtime.ts). */
export interface PodStepRecorder {
  now(): number;
  /** A finished step of the pod's current sync, from `startMs` to now. */
  step(uid: string, name: string, startMs: number, attributes?: SpanAttributes, error?: unknown): void;
  /** RunPodSandbox from `startMs` to now, with the CNI ADD that ran inside it as a child. */
  sandbox(uid: string, startMs: number, error?: unknown): void;
}

interface Journey {
  parent: TraceParent;
  attrs: SpanAttributes;
  phase: 'admitting' | 'starting' | 'running' | 'ready';
  seenAt: number;
  sync?: SpanHandle;
  syncs: number;
  lastSyncEnd?: number;
  runningAt?: number;
  readyAt?: number;
  cni?: { startMs: number; endMs: number; error?: unknown };
}

export class AgentPodJourneys implements PodStepRecorder {
  readonly #tracer: JourneyTracer;
  readonly #agent: ScopedTracer;
  readonly #nodeName: string;
  readonly #maxPods: number;
  readonly #journeys = new Map<string, Journey>();

  constructor(tracer: JourneyTracer, nodeName: string, o: { maxPods?: number } = {}) {
    this.#tracer = tracer;
    this.#agent = tracer.scope('agent');
    this.#nodeName = nodeName;
    this.#maxPods = Math.max(1, o.maxPods ?? DEFAULT_MAX_PODS);
  }

  now(): number {
    return this.#tracer.now();
  }

  /** The pod configuration delivered a pod: a Pending pod with a trace context starts its journey. */
  seen(pod: Pod): void {
    const uid = pod.metadata.uid;
    if (!uid || this.#journeys.has(uid)) return;
    const phase = pod.status?.phase;
    if ((phase && phase !== 'Pending') || pod.metadata.deletionTimestamp) return;
    const parent = podTraceParent(pod);
    if (!parent) return;
    if (this.#journeys.size >= this.#maxPods) this.#journeys.delete(this.#journeys.keys().next().value as string);
    const attrs = { [ATTR.podName]: pod.metadata.name ?? '', [ATTR.namespace]: pod.metadata.namespace ?? '', [ATTR.podUid]: uid, [ATTR.nodeName]: this.#nodeName };
    this.#journeys.set(uid, { parent, attrs, phase: 'admitting', seenAt: this.now(), syncs: 0 });
  }

  /** Admission judged the pod; a refused pod's journey ends here. */
  admitted(pod: Pod, ok: boolean, reason?: string): void {
    const uid = pod.metadata.uid ?? '';
    const j = this.#journeys.get(uid);
    if (!j || j.phase !== 'admitting') return;
    this.#agent.record(SPAN.agentAdmit, j.parent, j.seenAt, this.now(), j.attrs, ok ? undefined : new Error(`rejected: ${reason ?? 'unknown'}`));
    if (ok) j.phase = 'starting';
    else this.#journeys.delete(uid);
  }

  /** Runs one sync of the pod's runtime; traced as `agent.sync` while the pod is still starting. */
  async sync<T>(uid: string, fn: () => Promise<T>): Promise<T> {
    const j = this.#journeys.get(uid);
    if (!j || j.phase !== 'starting' || j.syncs >= MAX_SYNCS) return fn();
    j.syncs++;
    const span = (j.sync = this.#agent.start(SPAN.agentSync, j.parent, j.attrs, this.now()));
    try {
      const r = await fn();
      span.end(this.now());
      return r;
    } catch (err) {
      span.end(this.now(), err);
      throw err;
    } finally {
      j.sync = undefined;
      j.lastSyncEnd = this.now();
    }
  }

  step(uid: string, name: string, startMs: number, attributes?: SpanAttributes, error?: unknown): void {
    const j = this.#journeys.get(uid);
    if (j?.sync) this.#agent.record(name, j.sync.context, startMs, this.now(), { ...j.attrs, ...attributes }, error);
  }

  sandbox(uid: string, startMs: number, error?: unknown): void {
    const j = this.#journeys.get(uid);
    const cni = j?.cni;
    if (j) j.cni = undefined;
    if (!j?.sync) return;
    const ctx = this.#agent.record(SPAN.agentSandbox, j.sync.context, startMs, this.now(), j.attrs, error);
    if (cni) this.#agent.record(SPAN.cniAdd, ctx, cni.startMs, cni.endMs, j.attrs, cni.error);
  }

  /** The CNI service finished an ADD for the pod (it runs inside RunPodSandbox). */
  cniAdd(uid: string, startMs: number, endMs: number, error?: unknown): void {
    const j = this.#journeys.get(uid);
    if (j?.sync) j.cni = { startMs, endMs, error };
  }

  /** A status was computed for the pod: notes when every container first runs and when it is first Ready. */
  statusComputed(pod: Pod, status: PodStatus): void {
    const j = this.#journeys.get(pod.metadata.uid ?? '');
    if (!j || j.phase === 'admitting' || j.phase === 'ready') return;
    const now = this.now();
    const cs = status.containerStatuses ?? [];
    if (j.phase === 'starting' && cs.length > 0 && cs.every((c) => c.state?.running)) {
      this.#agent.record(SPAN.agentObserve, j.parent, Math.min(j.lastSyncEnd ?? now, now), now, j.attrs);
      j.phase = 'running';
      j.runningAt = now;
    }
    if (j.phase === 'running' && status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      this.#agent.record(SPAN.agentProbes, j.parent, j.runningAt ?? now, now, j.attrs);
      j.phase = 'ready';
      j.readyAt = now;
    }
  }

  /** The status manager's patch was accepted: the first one carrying Ready closes the journey. */
  statusWritten(uid: string, status: PodStatus): void {
    const j = this.#journeys.get(uid);
    if (!j || j.phase !== 'ready' || !status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    this.#agent.record(SPAN.agentStatus, j.parent, j.readyAt ?? this.now(), this.now(), j.attrs);
    this.#journeys.delete(uid);
  }

  /** The pod is gone from the node. */
  forget(uid: string): void {
    this.#journeys.delete(uid);
  }

  get openCount(): number {
    return this.#journeys.size;
  }

  spans(traceId: string): SpanRecord[] {
    return this.#tracer.spans(traceId);
  }
}
