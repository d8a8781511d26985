/**
 * In-memory state of the fake CRI runtime: sandboxes, containers, images, recorded calls and
 * injected failures. Behaviour follows containerd 1.6 where tests depend on it:
 * - IDs are 64 hex chars and any unique prefix resolves (containerd's truncindex);
 * - StopPodSandbox/StopContainer of an unknown ID → NOT_FOUND; RemovePodSandbox/RemoveContainer
 *   of an unknown ID succeed (idempotent);
 * - RemovePodSandbox force-stops the sandbox and removes its containers;
 * - CheckpointContainer, GetContainerEvents and the metrics RPCs are UNIMPLEMENTED.
 */
import { createHash, randomBytes } from 'node:crypto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type * as p from '@nodelet/proto';

export type GrpcStatusName = keyof typeof GrpcStatus;

/** A failure a handler answers with. */
export class FakeRpcError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(details);
  }
}

export function rpcError(code: GrpcStatusName, details: string): FakeRpcError {
  return new FakeRpcError(GrpcStatus[code], details);
}

export interface FakeSandbox {
  id: string;
  config: p.PodSandboxConfig;
  runtimeHandler: string;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: bigint;
  ip: string;
  netnsPath: string;
  pid: number;
}

export interface FakeContainer {
  id: string;
  sandboxId: string;
  config: p.ContainerConfig;
  imageRef: string;
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
  logPath: string;
}

export interface FakeImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  pinned?: boolean;
}

export interface RecordedCall {
  rpc: string;
  request: unknown;
}

export function newId(): string {
  return randomBytes(32).toString('hex');
}

export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** docker.io/library defaults and :latest, as containerd normalises references. */
export function normalizeRef(ref: string): string {
  if (ref.startsWith('sha256:')) return ref;
  let name = ref;
  const at = name.indexOf('@');
  const digest = at >= 0 ? name.slice(at) : '';
  if (at >= 0) name = name.slice(0, at);
  const slash = name.indexOf('/');
  const first = slash >= 0 ? name.slice(0, slash) : '';
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) name = `docker.io/${slash >= 0 ? '' : 'library/'}${name}`;
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  if (!digest && !lastPart.includes(':')) name += ':latest';
  return name + digest;
}

export function imageIdFor(ref: string): string {
  return `sha256:${createHash('sha256').update(normalizeRef(ref)).digest('hex')}`;
}

/** A lookup by full ID or unique prefix; undefined when absent, INVALID_ARGUMENT when ambiguous. */
export function byIdOrPrefix<T>(map: Map<string, T>, key: string | undefined, kind: string): T | undefined {
  if (!key) return undefined;
  const exact = map.get(key);
  if (exact) return exact;
  const hits = [...map.keys()].filter((k) => k.startsWith(key));
  if (hits.length > 1) throw rpcError('INVALID_ARGUMENT', `${kind} ID prefix "${key}" is ambiguous`);
  return hits.length === 1 ? map.get(hits[0] as string) : undefined;
}

export function labelsMatch(labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export interface InjectedFailure {
  code: GrpcStatusName;
  details: string;
  /** How many calls fail; Infinity for all (default 1). */
  times: number;
}

/** Shared state; the service handlers read and write it. Tests poke it directly. */
export class FakeRuntimeService {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Map<string, FakeImage>();
  readonly calls: RecordedCall[] = [];
  readonly conditions = new Map<string, { status: boolean; reason: string; message: string }>([
    ['RuntimeReady', { status: true, reason: '', message: '' }],
    ['NetworkReady', { status: true, reason: '', message: '' }],
  ]);
  podCidr = '';
  version: p.VersionResponse = { version: '0.1.0', runtimeName: 'fake-cri', runtimeVersion: 'v0.0.0-fake', runtimeApiVersion: 'v1' };
  /** URL returned by Exec/Attach/PortForward (set by FakeStreamingServer). */
  streamingBaseUrl = 'http://127.0.0.1:1';
  /**
   * When set, GetContainerEvents streams these and then stays open until the client cancels, as a
   * runtime with evented PLEG does; unset, it answers Unimplemented as containerd 1.6 does.
   */
  containerEvents: p.ContainerEventResponse[] | undefined = undefined;
  /** ExecSync behaviour; the default prints nothing and exits 0. */
  execSync: (containerId: string, cmd: string[]) => { stdout?: string; stderr?: string; exitCode?: number } = () => ({});
  readonly #failures = new Map<string, InjectedFailure[]>();
  readonly #hangs = new Set<string>();
  #nextIp = 2;

  /** Makes the next `times` calls of `rpc` (e.g. 'RunPodSandbox') fail with `code`. */
  injectError(rpc: string, code: GrpcStatusName, details = `injected ${code}`, times = 1): void {
    const list = this.#failures.get(rpc) ?? [];
    list.push({ code, details, times });
    this.#failures.set(rpc, list);
  }

  /** Makes every call of `rpc` never answer (for deadline and cancellation tests) until cleared. */
  hang(rpc: string, on = true): void {
    if (on) this.#hangs.add(rpc);
    else this.#hangs.delete(rpc);
  }

  isHanging(rpc: string): boolean {
    return this.#hangs.has(rpc);
  }

  /** Called by every handler first: records the call and returns an injected failure, if any. */
  enter(rpc: string, request: unknown): FakeRpcError | undefined {
    this.calls.push({ rpc, request });
    const list = this.#failures.get(rpc);
    const f = list?.[0];
    if (!f) return undefined;
    f.times -= 1;
    if (f.times <= 0) list.shift();
    return rpcError(f.code, f.details);
  }

  callsOf(rpc: string): unknown[] {
    return this.calls.filter((c) => c.rpc === rpc).map((c) => c.request);
  }

  nextIp(): string {
    return `10.231.0.${this.#nextIp++}`;
  }

  /** Test helper: the container's process exits with `exitCode`. */
  exitContainer(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): void {
    const c = byIdOrPrefix(this.containers, id, 'container');
    if (!c) throw new Error(`fake: no container ${id}`);
    c.state = 'CONTAINER_EXITED';
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAt = nowNs();
  }

  /** Test helper: an image present in the store. */
  addImage(ref: string, size = 1_000_000): FakeImage {
    const id = imageIdFor(ref);
    const existing = this.images.get(id);
    const tag = normalizeRef(ref);
    if (existing) {
      if (!existing.repoTags.includes(tag)) existing.repoTags.push(tag);
      return existing;
    }
    const img: FakeImage = { id, repoTags: tag.includes('@') ? [] : [tag], repoDigests: [`${tag.split(':')[0]}@${id}`], size };
    this.images.set(id, img);
    return img;
  }

  findImage(ref: string | undefined): FakeImage | undefined {
    if (!ref) return undefined;
    const norm = normalizeRef(ref);
    for (const img of this.images.values()) {
      if (img.id === ref || img.repoTags.includes(norm) || img.repoDigests.includes(norm)) return img;
    }
    if (/^[0-9a-f]{6,}$/.test(ref) || ref.startsWith('sha256:')) {
      const key = ref.startsWith('sha256:') ? ref : `sha256:${ref}`;
      return byIdOrPrefix(this.images, key, 'image');
    }
    return undefined;
  }
}
