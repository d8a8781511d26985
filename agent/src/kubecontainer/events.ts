/**
 * Pod events as every part of the agent emits them (kubelet's `record.EventRecorder` seen from
 * `kubecontainer`): the runtime, the prober and housekeeping write to a sink; `status/event-recorder.ts`
 * is the one that posts them.
 */
import type { Pod } from '@nodelet/api/agent';

export type EventType = 'Normal' | 'Warning';

/** Where pod events go (the event recorder). Never throws, never blocks. */
export interface PodEventSink {
  event(pod: Pod, type: EventType, reason: string, message: string, fieldPath?: string): void;
  /** The pod is gone: its events can no longer repeat, so nothing about them need be kept. */
  forget?(uid: string): void;
}
