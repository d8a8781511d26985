/**
 * The one model of a fake CRI runtime's state: sandboxes, containers, images and their transitions,
 * following containerd's CRI plugin. Synchronous and time-free: the gRPC fake
 * (`@nodelet/cri-client/testing`) serves it over a socket, the hollow node's runtime
 * (agent/src/hollow/fake-cri.ts) calls it in-process after its delays.
 *
 *   sandbox:    run ──▶ READY ──stop──▶ NOTREADY ──remove──▶ gone   (stop tears the pod network down)
 *   container:  create ──▶ CREATED ──start──▶ RUNNING ──stop / exit──▶ EXITED ──remove──▶ gone
 *
 * As containerd:
 * - IDs are 64 hex chars and a unique prefix resolves (truncindex); an ambiguous one is UNKNOWN;
 * - Stop, Status and Start of an unknown ID are NOT_FOUND; Remove of an unknown ID succeeds;
 * - StopContainer of a container that is not running does nothing (a CREATED one stays CREATED);
 * - StopPodSandbox kills (SIGKILL, exit 137) the running containers and tears down the network;
 * - RemovePodSandbox force-stops a READY sandbox, then removes it with its containers;
 * - StartContainer of a container not CREATED is UNKNOWN ("container is in … state"); in a sandbox
 *   not READY it is UNKNOWN and the container is EXITED with 128 "StartError";
 * - CreateContainer in a sandbox not READY is NOT_FOUND (its task is gone, containerd 1.6 and 1.7);
 * - names (sandbox name_namespace_uid_attempt, container name_attempt) are reserved until removal;
 * - host-network sandboxes get no IP (no CNI ADD).
 * Records hold only what the views need (the hollow node keeps about 30 pods for each of 100 nodes).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as p from '@nodelet/proto';
import { byIdOrPrefix, fakeRuntimeError } from './errors.js';
import { FakeImageStore } from './image-store.js';
import { containerMetadata, enumName, imageSpec, mounts, namespaceOptions, sandboxMetadata } from './views.js';

export interface FakeSandbox {
  id: string;
  config: p.PodSandboxConfig;
  runtimeHandler: string;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: bigint;
  /** The pod IP while READY; '' for host-network pods. */
  ip: string;
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
}

/** The pod network a sandbox is set up in (CNI ADD/DEL). */
export interface FakePodNetwork {
  /** An address for a new sandbox; throws (e.g. ERR_NETWORK_NOT_READY) when there is none. */
  setUp(): string;
  /** Gives the address back; idempotent. */
  tearDown(ip: string): void;
}

/** Filters of ListPodSandbox/ListContainers/List*Stats (ID and sandbox ID prefixes, state, labels). */
export interface FakeListFilter {
  id?: string;
  podSandboxId?: string;
  state?: { state?: string | number } | null;
  labelSelector?: { [k: string]: string };
}

export interface FakeRuntimeStateOptions {
  /** Nanoseconds since the epoch, for the CRI timestamps (injected by tests). */
  nowNs?: () => bigint;
  /** Default: addresses 10.231.0.2, .3, … never reused. */
  network?: FakePodNetwork;
  /**
   * How a container's process ends on StopContainer: 0 when it exits on SIGTERM (the hollow
   * node's pods), 137 (the default) when the grace period runs out and SIGKILL ends it.
   */
  stopExitCode?: number;
  /** Every image reference resolves, as if pulled before (FakeImageStore's `anyPresent`). */
  anyImagePresent?: boolean;
}

/** containerd's StartContainer failure status (errorStartExitCode, errorStartReason). */
const START_ERROR = { exitCode: 128, reason: 'StartError' } as const;
const SIGKILL_EXIT = 137;

export function newId(): string {
  return randomBytes(32).toString('hex');
}

export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

export function labelsMatch(labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels?.[k] !== v) return false;
  return true;
}

function sequentialNetwork(): FakePodNetwork {
  let next = 2;
  return { setUp: () => `10.231.0.${next++}`, tearDown: () => undefined };
}

/** A filter's state matches: present without a value means the enum's zero (READY / CREATED), as in proto3. */
function stateMatches<T extends string>(names: Readonly<Record<string, T>>, want: { state?: string | number } | null | undefined, state: T, zero: T): boolean {
  return !want || state === enumName(names, want.state, zero);
}

export class FakeRuntimeState extends FakeImageStore {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  readonly #now: () => bigint;
  readonly #network: FakePodNetwork;
  readonly #stopExitCode: number;

  constructor(o: FakeRuntimeStateOptions = {}) {
    super(o.anyImagePresent ?? false);
    this.#now = o.nowNs ?? nowNs;
    this.#network = o.network ?? sequentialNetwork();
    this.#stopExitCode = o.stopExitCode ?? SIGKILL_EXIT;
  }

  /** The sandbox an ID or unique prefix names; NOT_FOUND as `rpc` answers it. */
  sandbox(id: string | undefined, rpc: string): FakeSandbox {
    const sb = byIdOrPrefix(this.sandboxes, id, 'sandbox', rpc);
    if (!sb) throw fakeRuntimeError(rpc, 'NOT_FOUND', `an error occurred when try to find sandbox "${id ?? ''}": not found`);
    return sb;
  }

  /** The container an ID or unique prefix names; NOT_FOUND as `rpc` answers it. */
  container(id: string | undefined, rpc: string): FakeContainer {
    const c = byIdOrPrefix(this.containers, id, 'container', rpc);
    if (!c) throw fakeRuntimeError(rpc, 'NOT_FOUND', `an error occurred when try to find container "${id ?? ''}": not found`);
    return c;
  }

  runPodSandbox(config: p.PodSandboxConfig, runtimeHandler = ''): string {
    const md = config.metadata;
    if (!md?.name || !md.uid || !md.namespace) throw fakeRuntimeError('RunPodSandbox', 'INVALID_ARGUMENT', 'sandbox config must include metadata name, uid and namespace');
    for (const sb of this.sandboxes.values()) {
      const o = sb.config.metadata;
      if (o?.name === md.name && o.namespace === md.namespace && o.uid === md.uid && (o.attempt ?? 0) === (md.attempt ?? 0)) {
        throw fakeRuntimeError('RunPodSandbox', 'UNKNOWN', `failed to reserve sandbox name "${md.name}_${md.namespace}_${md.uid}_${md.attempt ?? 0}": name is reserved for "${sb.id}"`);
      }
    }
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    const ip = hostNetwork ? '' : this.#network.setUp();
    const id = newId();
    this.sandboxes.set(id, { id, config, runtimeHandler, state: 'SANDBOX_READY', createdAt: this.#now(), ip });
    return id;
  }

  stopPodSandbox(id: string | undefined): void {
    const sb = this.sandbox(id, 'StopPodSandbox');
    for (const c of this.containers.values()) if (c.sandboxId === sb.id && c.state === 'CONTAINER_RUNNING') this.exitContainer(c.id, SIGKILL_EXIT);
    if (sb.state === 'SANDBOX_READY' && sb.ip) this.#network.tearDown(sb.ip);
    sb.state = 'SANDBOX_NOTREADY';
  }

  removePodSandbox(id: string | undefined): void {
    const sb = byIdOrPrefix(this.sandboxes, id, 'sandbox', 'RemovePodSandbox');
    if (!sb) return;
    if (sb.state === 'SANDBOX_READY') this.stopPodSandbox(sb.id);
    for (const c of this.containers.values()) if (c.sandboxId === sb.id) this.containers.delete(c.id);
    this.sandboxes.delete(sb.id);
  }

  createContainer(sandboxId: string | undefined, config: p.ContainerConfig): string {
    const rpc = 'CreateContainer';
    const sb = byIdOrPrefix(this.sandboxes, sandboxId, 'sandbox', rpc);
    if (!sb) throw fakeRuntimeError(rpc, 'NOT_FOUND', `failed to find sandbox id "${sandboxId ?? ''}": not found`);
    if (sb.state !== 'SANDBOX_READY') throw fakeRuntimeError(rpc, 'NOT_FOUND', `failed to get sandbox container task: no running task found: task ${sb.id} not found: not found`);
    const md = config.metadata;
    if (!md?.name) throw fakeRuntimeError(rpc, 'INVALID_ARGUMENT', 'container config must include metadata name');
    const img = this.findImage(config.image?.image);
    if (!img) throw fakeRuntimeError(rpc, 'NOT_FOUND', `failed to resolve image "${config.image?.image ?? ''}": not found`);
    for (const c of this.containers.values()) {
      if (c.sandboxId === sb.id && c.config.metadata?.name === md.name && (c.config.metadata.attempt ?? 0) === (md.attempt ?? 0)) {
        throw fakeRuntimeError(rpc, 'UNKNOWN', `failed to reserve container name "${md.name}_${md.attempt ?? 0}": name is reserved for "${c.id}"`);
      }
    }
    const id = newId();
    this.containers.set(id, {
      id, sandboxId: sb.id, config, imageRef: img.id, state: 'CONTAINER_CREATED', createdAt: this.#now(), startedAt: 0n, finishedAt: 0n, exitCode: 0, reason: '', message: '',
    });
    return id;
  }

  startContainer(id: string | undefined): void {
    const c = this.container(id, 'StartContainer');
    if (c.state !== 'CONTAINER_CREATED') throw fakeRuntimeError('StartContainer', 'UNKNOWN', `failed to set starting state for container "${c.id}": container is in ${c.state} state`);
    if (this.sandboxes.get(c.sandboxId)?.state !== 'SANDBOX_READY') {
      const message = `sandbox container "${c.sandboxId}" is not running`;
      this.exitContainer(c.id, START_ERROR.exitCode, START_ERROR.reason, message);
      throw fakeRuntimeError('StartContainer', 'UNKNOWN', message);
    }
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = this.#now();
  }

  /** Only a running container is stopped; it exits with the process's stop exit code. */
  stopContainer(id: string | undefined): void {
    const c = this.container(id, 'StopContainer');
    if (c.state === 'CONTAINER_RUNNING') this.exitContainer(c.id, this.#stopExitCode);
  }

  removeContainer(id: string | undefined): void {
    const c = byIdOrPrefix(this.containers, id, 'container', 'RemoveContainer');
    if (c) this.containers.delete(c.id);
  }

  /** The container's process ends with `exitCode` (a test's, a stop's or a failed start's). */
  exitContainer(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error', message = ''): void {
    const c = this.container(id, 'ExitContainer');
    c.state = 'CONTAINER_EXITED';
    c.exitCode = exitCode;
    c.reason = reason;
    c.message = message;
    c.finishedAt = this.#now();
  }

  listPodSandbox(f?: FakeListFilter | null): p.PodSandbox__Output[] {
    const out: p.PodSandbox__Output[] = [];
    for (const sb of this.sandboxes.values()) {
      if (f?.id && !sb.id.startsWith(f.id)) continue;
      if (!stateMatches(p.PodSandboxState, f?.state, sb.state, 'SANDBOX_READY') || !labelsMatch(sb.config.labels, f?.labelSelector)) continue;
      out.push(this.#sandboxView(sb));
    }
    return out;
  }

  podSandboxStatus(id: string | undefined): p.PodSandboxStatus__Output {
    const sb = this.sandbox(id, 'PodSandboxStatus');
    return {
      ...this.#sandboxView(sb),
      network: { ip: sb.state === 'SANDBOX_READY' ? sb.ip : '', additionalIps: [] },
      linux: { namespaces: { options: namespaceOptions(sb.config.linux?.securityContext?.namespaceOptions) } },
    };
  }

  listContainers(f?: FakeListFilter | null): p.Container__Output[] {
    const out: p.Container__Output[] = [];
    for (const c of this.containers.values()) {
      if (!this.containerMatches(c, f) || !stateMatches(p.ContainerState, f?.state, c.state, 'CONTAINER_CREATED')) continue;
      out.push({
        id: c.id, podSandboxId: c.sandboxId, metadata: containerMetadata(c.config.metadata), image: imageSpec(c.config.image), imageRef: c.imageRef,
        state: c.state, createdAt: c.createdAt.toString(), labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {},
      });
    }
    return out;
  }

  /** A container passes the ID, sandbox ID and label parts of a filter. */
  containerMatches(c: FakeContainer, f?: FakeListFilter | null): boolean {
    return (!f?.id || c.id.startsWith(f.id)) && (!f?.podSandboxId || c.sandboxId.startsWith(f.podSandboxId)) && labelsMatch(c.config.labels, f?.labelSelector);
  }

  containerStatus(id: string | undefined): p.ContainerStatus__Output {
    const c = this.container(id, 'ContainerStatus');
    const logDir = this.sandboxes.get(c.sandboxId)?.config.logDirectory ?? '';
    return {
      id: c.id, metadata: containerMetadata(c.config.metadata), state: c.state, createdAt: c.createdAt.toString(), startedAt: c.startedAt.toString(), finishedAt: c.finishedAt.toString(),
      exitCode: c.exitCode, image: imageSpec(c.config.image), imageRef: c.imageRef, reason: c.reason, message: c.message,
      labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {}, mounts: mounts(c.config.mounts),
      // containerd joins the sandbox's log directory and the container's log path
      logPath: logDir && c.config.logPath ? join(logDir, c.config.logPath) : '',
      resources: null,
    };
  }

  #sandboxView(sb: FakeSandbox): p.PodSandbox__Output {
    return {
      id: sb.id, metadata: sandboxMetadata(sb.config.metadata), state: sb.state, createdAt: sb.createdAt.toString(),
      labels: sb.config.labels ?? {}, annotations: sb.config.annotations ?? {}, runtimeHandler: sb.runtimeHandler,
    };
  }
}
