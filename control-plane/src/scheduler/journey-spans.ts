/**
 * The scheduler's steps of a pod journey (docs/tracing.md), recorded under the pod's traceparent
 * annotation once the pod is bound-to-be: `scheduler.queue` (first seen pending → popped for the
 * cycle that placed it, failed attempts and backoff included), `scheduler.schedule` (that cycle)
 * and `scheduler.bind` (PreBind and the binding call). Pods without a valid annotation are skipped.
 *
 * The queue keeps monotonic times; spans are in epoch ms, so a monotonic instant is moved onto the
 * wall clock by its distance from now. Called from the scheduling loop and the binding cycle;
 * synchronous.
 */
import type { Pod } from '@nodelet/api';
import { ATTR, podTraceParent, SPAN, type JourneyTracer, type ScopedTracer } from '@nodelet/api/tracing';
import type { Clock } from '@nodelet/base';

export class SchedulerJourneySpans {
  readonly #tracer: ScopedTracer;
  readonly #now: () => number;
  readonly #clock: Clock;

  constructor(tracer: JourneyTracer, clock: Clock) {
    this.#tracer = tracer.scope('scheduler');
    this.#now = tracer.now;
    this.#clock = clock;
  }

  /**
   * The cycle that began at monotonic `cycleStart` chose `node` for a pod first seen at monotonic
   * `queuedAt`. Returns the cycle's end (epoch ms), where the binding's span starts, so that no
   * clock tick falls between the two; undefined for a pod without a trace context.
   */
  scheduled(pod: Pod, node: string, queuedAt: number, cycleStart: number): number | undefined {
    const parent = podTraceParent(pod);
    if (!parent) return undefined;
    const now = this.#now();
    const toWall = (mono: number): number => now - (this.#clock.monotonic() - mono);
    const attrs = { ...podAttributes(pod), [ATTR.nodeName]: node };
    const popped = toWall(cycleStart);
    this.#tracer.record(SPAN.schedulerQueue, parent, Math.min(toWall(queuedAt), popped), popped, podAttributes(pod));
    this.#tracer.record(SPAN.schedulerSchedule, parent, popped, now, attrs);
    return now;
  }

  /** The binding that started at epoch `startMs` was accepted. */
  bound(pod: Pod, node: string, startMs: number): void {
    const parent = podTraceParent(pod);
    if (parent) this.#tracer.record(SPAN.schedulerBind, parent, startMs, this.#now(), { ...podAttributes(pod), [ATTR.nodeName]: node });
  }
}

function podAttributes(pod: Pod): Record<string, string> {
  return { [ATTR.podName]: pod.metadata.name ?? '', [ATTR.namespace]: pod.metadata.namespace ?? '', [ATTR.podUid]: pod.metadata.uid ?? '' };
}
