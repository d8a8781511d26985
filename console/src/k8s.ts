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

/** A discovery.k8s.io/v1 EndpointSlice: the endpoints of the Service named by its `kubernetes.io/service-name` label. */
export interface EndpointSlice extends KObject {
  metadata: ObjectMeta & { labels?: Record<string, string> };
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean } }[] | null;
  ports?: { name?: string; port?: number | null; protocol?: string }[] | null;
}

/** The label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** One endpoint address (with a port of its slice) as the Services table shows it. */
export interface ServiceEndpoint {
  /** `10.244.0.5:8080`, `[fd00::5]:8080`, or the bare address when the slice names no port. */
  text: string;
  /** Whether the slice says the endpoint takes traffic (`ready`; unset counts as ready). */
  ready: boolean;
  /** `not ready`, `terminating`, `terminating, serving`, or undefined for a ready endpoint that is not terminating. */
  mark?: string;
}

/**
 * The endpoints of Service `service` as its EndpointSlices list them, ready ones first, each
 * address with each port of its slice. Conditions as discovery.k8s.io/v1 defines them: unset
 * `ready` means ready, unset `terminating` means not terminating, unset `serving` defers to
 * `ready`. A slice port with no number means every port: the address alone. Only the first
 * address of an endpoint is shown (the API calls them fungible; kube-proxy uses the first).
 */
export function serviceEndpoints(slices: EndpointSlice[], service: string): ServiceEndpoint[] {
  const seen = new Map<string, ServiceEndpoint>();
  for (const sl of slices) {
    if (sl.metadata.labels?.[SERVICE_NAME_LABEL] !== service) continue;
    const ports = sl.ports?.length ? sl.ports.map((p) => p.port ?? undefined) : [undefined];
    for (const ep of sl.endpoints ?? []) {
      const address = ep.addresses?.[0];
      if (!address) continue;
      const ready = ep.conditions?.ready !== false;
      const terminating = ep.conditions?.terminating === true;
      const serving = ep.conditions?.serving ?? ready;
      const mark = terminating ? (serving && !ready ? 'terminating, serving' : 'terminating') : ready ? undefined : 'not ready';
      const host = sl.addressType === 'IPv6' ? `[${address}]` : address;
      for (const port of ports) {
        const text = port === undefined ? address : `${host}:${port}`;
        // The same endpoint in two slices (while the controller moves it) is listed once.
        if (!seen.has(text)) seen.set(text, { text, ready, mark });
      }
    }
  }
  return [...seen.values()].sort((a, b) => Number(b.ready) - Number(a.ready) || a.text.localeCompare(b.text, 'en', { numeric: true }));
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
