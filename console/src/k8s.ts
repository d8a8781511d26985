/** The few Kubernetes shapes the console reads, and helpers over them (no client library: the page stays small). */
import type { KObject, ObjectMeta } from './watch.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Node extends KObject {
  status?: { capacity?: Record<string, string>; allocatable?: Record<string, string>; conditions?: Condition[]; nodeInfo?: { kubeletVersion?: string }; images?: { names?: string[] }[] };
}

export interface Pod extends KObject {
  metadata: ObjectMeta & { labels?: Record<string, string>; creationTimestamp?: string; deletionTimestamp?: string; ownerReferences?: OwnerReference[] };
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

/** A pod's owners (a ReplicaSet, a StatefulSet, a DaemonSet, a Job). */
export interface OwnerReference {
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** The workload kinds the console lists, with the fields it reads from each. */
export interface Workload extends KObject {
  metadata: ObjectMeta & { creationTimestamp?: string };
  spec?: {
    replicas?: number;
    completions?: number;
    schedule?: string;
    suspend?: boolean;
    selector?: { matchLabels?: Record<string, string> };
    template?: { spec?: { containers?: { image?: string }[] } };
    jobTemplate?: { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } };
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    numberReady?: number;
    desiredNumberScheduled?: number;
    active?: number | { name?: string }[];
    succeeded?: number;
    failed?: number;
    lastScheduleTime?: string;
    conditions?: Condition[];
  };
}

export interface Lease extends KObject {
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

/** A NodeMetrics object of metrics.k8s.io/v1beta1, as `kubectl top node` reads it. */
export interface NodeMetrics extends KObject {
  usage?: { cpu?: string; memory?: string };
}

// Decimal suffixes as exponents (parsed with the digits, so 123456789n is exactly 0.123456789), binary ones as factors.
const DECIMAL: Record<string, string> = { n: 'e-9', u: 'e-6', m: 'e-3', '': '', k: 'e3', M: 'e6', G: 'e9', T: 'e12', P: 'e15', E: 'e18' };
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A resource quantity's value (`250m` → 0.25, `512Mi` → 536870912, `1e3` → 1000); NaN when it is not one. */
export function parseQuantity(q: string | undefined): number {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/.exec(q?.trim() ?? '');
  if (!m) return NaN;
  const suffix = m[3] ?? '';
  return suffix in BINARY ? Number(m[1]) * BINARY[suffix]! : Number(m[1]! + (m[2] ?? DECIMAL[suffix]!));
}

/**
 * `kubectl top node`'s figures for one node: CPU in millicores and memory in Mi (rounded down,
 * as kubectl prints them), each with its share of the node's allocatable.
 */
export function topFigures(usage: NodeMetrics['usage'], allocatable: Record<string, string> | undefined): { cpu: string; cpuPercent: string; memory: string; memoryPercent: string } {
  const cpu = parseQuantity(usage?.cpu);
  const mem = parseQuantity(usage?.memory);
  const pct = (used: number, of: number): string => (Number.isFinite(used) && of > 0 ? `${Math.floor((used / of) * 100)}%` : '?');
  return {
    cpu: Number.isFinite(cpu) ? `${Math.floor(cpu * 1000)}m` : '?',
    cpuPercent: pct(cpu, parseQuantity(allocatable?.cpu)),
    memory: Number.isFinite(mem) ? `${Math.floor(mem / 2 ** 20)}Mi` : '?',
    memoryPercent: pct(mem, parseQuantity(allocatable?.memory)),
  };
}

/** The time since `fromIso` as kubectl's AGE column writes a duration: `45s`, `3m12s`, `125m`, `5h20m`, `30h`, `3d4h`, `40d`. */
export function age(fromIso: string | undefined, now: number): string {
  const t = fromIso ? Date.parse(fromIso) : NaN;
  if (!Number.isFinite(t)) return '?';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  const two = (a: number, ua: string, b: number, ub: string): string => (b ? `${a}${ua}${b}${ub}` : `${a}${ua}`);
  if (s < 120) return `${s}s`;
  if (m < 10) return two(m, 'm', s % 60, 's');
  if (m < 180) return `${m}m`;
  if (h < 8) return two(h, 'h', m % 60, 'm');
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return two(d, 'd', h % 24, 'h');
  return `${d}d`;
}

export interface Namespace extends KObject {
  status?: { phase?: string };
}
