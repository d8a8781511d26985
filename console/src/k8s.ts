/** The few Kubernetes shapes the console reads, and helpers over them (no client library: the page stays small). */
import type { KObject, ObjectMeta } from './watch.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Node extends KObject {
  status?: { capacity?: Record<string, string>; allocatable?: Record<string, string>; conditions?: Condition[]; nodeInfo?: { kubeletVersion?: string } };
}

export interface Pod extends KObject {
  metadata: ObjectMeta & { labels?: Record<string, string>; creationTimestamp?: string; deletionTimestamp?: string };
  spec?: { nodeName?: string; containers?: { name: string; image?: string }[] };
  status?: { phase?: string; podIP?: string; containerStatuses?: { name: string; ready?: boolean; restartCount?: number }[] };
}

export interface Deployment extends KObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> }; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { replicas?: number; readyReplicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

export interface Service extends KObject {
  spec?: {
    selector?: Record<string, string>; type?: string; clusterIP?: string; ports?: { port: number; protocol?: string; targetPort?: number | string; nodePort?: number }[] };
}

export interface Event extends KObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  metadata: ObjectMeta & { creationTimestamp?: string };
  involvedObject?: { kind?: string; name?: string };
}

export const byName = <T extends KObject>(a: T, b: T): number => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** "True", "False" or "Unknown" for a node's Ready condition. */
export function nodeReady(n: Node): string {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

/** The pressure and unavailability conditions that are True (all but Ready). */
export function nodeProblems(n: Node): string[] {
  return (n.status?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.status === 'True').map((c) => c.type);
}

/** Whether `pod` carries every label of `selector` (a Deployment's matchLabels). */
export function matches(selector: Record<string, string> | undefined, pod: Pod): boolean {
  if (!selector || !Object.keys(selector).length) return false;
  return Object.entries(selector).every(([k, v]) => pod.metadata.labels?.[k] === v);
}

/** Whether the pod is Ready (its Ready condition True), as the endpoints controller counts a backend. */
export function podReady(p: Pod): boolean {
  return !p.metadata.deletionTimestamp && !!(p.status as { conditions?: Condition[] } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A pod's phase as kubectl shows it: Terminating once deletion started. */
export function podPhase(p: Pod): string {
  return p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase ?? 'Pending');
}

export function eventTime(e: Event): string {
  return e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '';
}

/** A DNS-1123 label, as the API checks a Deployment's and a Service's name. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
