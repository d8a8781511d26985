/**
 * What the runtime reports about one pod, in the agent's terms (kubelet `kubecontainer.PodStatus`).
 * Built from CRI listings by the PLEG and read by `computePodActions` and the status computation.
 * Pure data; timestamps in ms since the epoch.
 */
import type { CriContainer as Container__Output, CriContainerStatus as ContainerStatus__Output, CriSandbox as PodSandbox__Output } from './cri.js';
import {
  CONTAINER_HASH,
  CONTAINER_NAME,
  CONTAINER_RESTART_COUNT,
  CONTAINER_TYPE,
  POD_NAME,
  POD_NAMESPACE,
  POD_UID,
  type ContainerType,
} from './labels.js';

export interface ObservedSandbox {
  id: string;
  attempt: number;
  ready: boolean;
  createdAt: number;
  /** Pod IPs from PodSandboxStatus (primary first); empty until known or for host network. */
  ips: string[];
  name: string;
  namespace: string;
  uid: string;
}

export type ObservedContainerState = 'created' | 'running' | 'exited' | 'unknown';

export interface ObservedContainer {
  id: string;
  sandboxId: string;
  name: string;
  type: ContainerType;
  state: ObservedContainerState;
  hash: string;
  restartCount: number;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  /** Runtime reason for an exit, e.g. "OOMKilled", "Error", "Completed". */
  reason?: string;
  message?: string;
  image: string;
  imageRef: string;
  logPath?: string;
}

/** One pod's runtime view. Sandboxes and containers are sorted newest first. */
export interface ObservedPod {
  uid: string;
  name: string;
  namespace: string;
  sandboxes: ObservedSandbox[];
  containers: ObservedContainer[];
}

const NS_PER_MS = 1_000_000n;

/**
 * CRI int64 nanoseconds (string on output) → ms; 0 when unset. Negative times are unset too:
 * containerd reports Go's zero time (year 1, below int64 nanoseconds, so a negative number) for a
 * sandbox whose RunPodSandbox never completed. A decimal string loses its last six digits (the
 * truncating division, exact: every int64 of ms fits a double's integers) without a BigInt: the
 * PLEG converts about five of these per pod every second.
 */
export function nanosToMs(v: string | number | undefined | null): number {
  if (v === undefined || v === null || v === '' || v === '0' || v === 0) return 0;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) {
    const ms = v.length > 6 ? Number(v.slice(0, -6)) : 0;
    return ms > 0 ? ms : 0;
  }
  const ms = Number(BigInt(v) / NS_PER_MS);
  return ms > 0 ? ms : 0;
}

export function emptyObservedPod(uid: string, name = '', namespace = ''): ObservedPod {
  return { uid, name, namespace, sandboxes: [], containers: [] };
}

export function sandboxFromCri(s: PodSandbox__Output, ips: string[] = []): ObservedSandbox {
  return {
    id: s.id,
    attempt: s.metadata?.attempt ?? 0,
    ready: s.state === 'SANDBOX_READY',
    createdAt: nanosToMs(s.createdAt),
    ips,
    name: s.labels[POD_NAME] ?? s.metadata?.name ?? '',
    namespace: s.labels[POD_NAMESPACE] ?? s.metadata?.namespace ?? '',
    uid: s.labels[POD_UID] ?? s.metadata?.uid ?? '',
  };
}

function stateFromCri(s: string): ObservedContainerState {
  switch (s) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

function typeOf(v: string | undefined): ContainerType {
  return v === 'init' || v === 'ephemeral' ? v : 'regular';
}

/** From a ListContainers entry, refined by ContainerStatus when given (exit code, times, reason). */
export function containerFromCri(c: Container__Output, st?: ContainerStatus__Output): ObservedContainer {
  const labels = c.labels ?? {};
  const ann = c.annotations ?? {};
  const out: ObservedContainer = {
    id: c.id,
    sandboxId: c.podSandboxId,
    name: labels[CONTAINER_NAME] ?? c.metadata?.name ?? '',
    type: typeOf(ann[CONTAINER_TYPE] ?? labels[CONTAINER_TYPE]),
    state: stateFromCri(st?.state ?? c.state),
    hash: ann[CONTAINER_HASH] ?? '',
    restartCount: Number(ann[CONTAINER_RESTART_COUNT] ?? c.metadata?.attempt ?? 0) || 0,
    createdAt: nanosToMs(c.createdAt),
    image: c.image?.image ?? '',
    imageRef: c.imageRef,
  };
  if (st) {
    out.startedAt = nanosToMs(st.startedAt) || undefined;
    out.finishedAt = nanosToMs(st.finishedAt) || undefined;
    if (out.state === 'exited') out.exitCode = st.exitCode;
    if (st.reason) out.reason = st.reason;
    if (st.message) out.message = st.message;
    if (st.image?.image) out.image = st.image.image;
    if (st.imageRef) out.imageRef = st.imageRef;
    if (st.logPath) out.logPath = st.logPath;
  }
  return out;
}

/** The newest container of `name` (containers are sorted newest first). */
export function latestContainer(p: ObservedPod, name: string, type?: ContainerType): ObservedContainer | undefined {
  return p.containers.find((c) => c.name === name && (type === undefined || c.type === type));
}

export function sortNewestFirst(p: ObservedPod): ObservedPod {
  p.sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  p.containers.sort((a, b) => b.createdAt - a.createdAt || b.restartCount - a.restartCount);
  return p;
}

/**
 * The same view of one pod, field by field (sandboxes and containers in the same order): what
 * the PLEG compares each relist with the cached view, without serialising either. A field set to
 * undefined counts as absent, as in JSON.
 */
export function sameObservedPod(a: ObservedPod, b: ObservedPod): boolean {
  if (a.uid !== b.uid || a.name !== b.name || a.namespace !== b.namespace) return false;
  if (a.sandboxes.length !== b.sandboxes.length || a.containers.length !== b.containers.length) return false;
  for (let i = 0; i < a.sandboxes.length; i++) if (!sameFlat(a.sandboxes[i]!, b.sandboxes[i]!)) return false;
  for (let i = 0; i < a.containers.length; i++) if (!sameFlat(a.containers[i]!, b.containers[i]!)) return false;
  return true;
}

/** Objects whose values are primitives or arrays of primitives (ObservedSandbox, ObservedContainer). */
function sameFlat(a: object, b: object): boolean {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    const v = x[k];
    if (v === undefined) continue;
    keys++;
    const w = y[k];
    if (v === w) continue;
    if (!Array.isArray(v) || !Array.isArray(w) || v.length !== w.length) return false;
    for (let i = 0; i < v.length; i++) if (v[i] !== w[i]) return false;
  }
  for (const k in y) if (y[k] !== undefined) keys--;
  return keys === 0;
}
