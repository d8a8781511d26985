/**
 * The in-memory state of a hollow node's runtime: sandboxes, containers and their transitions,
 * following containerd where the agent depends on it. Synchronous and time-free (the delays are
 * in fake-cri.ts); one instance per hollow node.
 *
 *   sandbox:    run ──▶ READY ──stop──▶ NOTREADY ──remove──▶ gone   (stop releases the pod IP)
 *   container:  create ──▶ CREATED ──start──▶ RUNNING ──stop──▶ EXITED(0) ──remove──▶ gone
 *               (stopping a sandbox stops its containers; removing it removes them)
 *
 * - Stop of an unknown sandbox/container is NOT_FOUND; Remove of an unknown one succeeds.
 * - Start of a container that is not CREATED, or whose sandbox is not READY, is FAILED_PRECONDITION.
 * - Containers never exit by themselves: hollow pods run until they are stopped.
 */
import { randomBytes } from 'node:crypto';
import { AgentError } from '@nodelet/base';
import type { ContainerConfig, CriContainer, CriContainerStatus, CriSandbox, CriSandboxStatus, PodSandboxConfig } from '../kubecontainer/cri.js';
import { PodIpam } from './pod-ipam.js';

type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED';

interface Sandbox {
  id: string;
  config: PodSandboxConfig;
  runtimeHandler: string;
  state: SandboxState;
  createdAt: string;
  ip: string;
  hostNetwork: boolean;
}

interface Container {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  imageRef: string;
  state: ContainerState;
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  reason: string;
}

/** Filters of ListPodSandbox/ListContainers the agent sends (id, state, sandbox, label selector). */
export interface FakeListFilter {
  id?: string;
  podSandboxId?: string;
  state?: { state?: string } | null;
  labelSelector?: { [k: string]: string };
}

function matchLabels(labels: { [k: string]: string }, selector: { [k: string]: string } | undefined): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

function notFound(what: string): AgentError {
  return new AgentError('ERR_NOT_FOUND', `${what} not found`);
}

export class FakeRuntimeState {
  readonly ipam = new PodIpam();
  readonly #sandboxes = new Map<string, Sandbox>();
  readonly #containers = new Map<string, Container>();
  readonly #nowNs: () => bigint;

  /** `nowNs`: nanoseconds since the epoch, for the CRI timestamps (injected for tests). */
  constructor(nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n) {
    this.#nowNs = nowNs;
  }

  get sandboxCount(): number {
    return this.#sandboxes.size;
  }

  get containerCount(): number {
    return this.#containers.size;
  }

  /** A READY sandbox with an IP from the pod CIDR (none for host-network pods). */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): string {
    const hostNetwork = config.linux?.securityContext?.namespaceOptions?.network === 'NODE';
    const ip = hostNetwork ? '' : this.ipam.allocate();
    const id = randomBytes(32).toString('hex');
    this.#sandboxes.set(id, { id, config, runtimeHandler, state: 'SANDBOX_READY', createdAt: String(this.#nowNs()), ip, hostNetwork });
    return id;
  }

  stopPodSandbox(id: string): void {
    const sb = this.#sandbox(id);
    if (!sb) throw notFound(`sandbox "${id}"`);
    for (const c of this.#containers.values()) if (c.sandboxId === sb.id && c.state !== 'CONTAINER_EXITED') this.#exit(c, 137, 'Error');
    if (sb.state === 'SANDBOX_READY') this.ipam.release(sb.ip);
    sb.state = 'SANDBOX_NOTREADY';
  }

  removePodSandbox(id: string): void {
    const sb = this.#sandbox(id);
    if (!sb) return;
    if (sb.state === 'SANDBOX_READY') this.stopPodSandbox(sb.id);
    for (const c of [...this.#containers.values()]) if (c.sandboxId === sb.id) this.#containers.delete(c.id);
    this.#sandboxes.delete(sb.id);
  }

  createContainer(sandboxId: string, config: ContainerConfig, imageRef: string): string {
    const sb = this.#sandbox(sandboxId);
    if (!sb) throw notFound(`sandbox "${sandboxId}"`);
    if (sb.state !== 'SANDBOX_READY') throw new AgentError('ERR_FAILED_PRECONDITION', `sandbox "${sb.id}" is not ready`);
    const id = randomBytes(32).toString('hex');
    this.#containers.set(id, { id, sandboxId: sb.id, config, imageRef, state: 'CONTAINER_CREATED', createdAt: String(this.#nowNs()), startedAt: '0', finishedAt: '0', exitCode: 0, reason: '' });
    return id;
  }

  startContainer(id: string): void {
    const c = this.#container(id);
    if (!c) throw notFound(`container "${id}"`);
    if (c.state !== 'CONTAINER_CREATED') throw new AgentError('ERR_FAILED_PRECONDITION', `container "${c.id}" is in state ${c.state}, not created`);
    if (this.#sandboxes.get(c.sandboxId)?.state !== 'SANDBOX_READY') throw new AgentError('ERR_FAILED_PRECONDITION', `sandbox "${c.sandboxId}" of container "${c.id}" is not ready`);
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = String(this.#nowNs());
  }

  /** SIGTERM always works in the hollow runtime: the container exits 0 ("Completed"). */
  stopContainer(id: string): void {
    const c = this.#container(id);
    if (!c) throw notFound(`container "${id}"`);
    if (c.state === 'CONTAINER_RUNNING') this.#exit(c, 0, 'Completed');
    else if (c.state === 'CONTAINER_CREATED') this.#exit(c, 0, 'Completed');
  }

  removeContainer(id: string): void {
    const c = this.#container(id);
    if (c) this.#containers.delete(c.id);
  }

  listPodSandbox(filter?: FakeListFilter | null): CriSandbox[] {
    const out: CriSandbox[] = [];
    for (const sb of this.#sandboxes.values()) {
      if (filter?.id && !sb.id.startsWith(filter.id)) continue;
      if (filter?.state?.state && filter.state.state !== sb.state) continue;
      if (!matchLabels(sb.config.labels ?? {}, filter?.labelSelector)) continue;
      out.push({ id: sb.id, metadata: this.#sandboxMetadata(sb), state: sb.state, createdAt: sb.createdAt, labels: { ...sb.config.labels }, annotations: { ...sb.config.annotations }, runtimeHandler: sb.runtimeHandler });
    }
    return out;
  }

  podSandboxStatus(id: string): CriSandboxStatus {
    const sb = this.#sandbox(id);
    if (!sb) throw notFound(`sandbox "${id}"`);
    return {
      id: sb.id,
      metadata: this.#sandboxMetadata(sb),
      state: sb.state,
      createdAt: sb.createdAt,
      network: { ip: sb.state === 'SANDBOX_READY' ? sb.ip : '', additionalIps: [] },
      linux: { namespaces: { options: { network: sb.hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD', targetId: '', usernsOptions: null } } },
      labels: { ...sb.config.labels },
      annotations: { ...sb.config.annotations },
      runtimeHandler: sb.runtimeHandler,
    };
  }

  listContainers(filter?: FakeListFilter | null): CriContainer[] {
    const out: CriContainer[] = [];
    for (const c of this.#containers.values()) {
      if (filter?.id && !c.id.startsWith(filter.id)) continue;
      if (filter?.podSandboxId && !c.sandboxId.startsWith(filter.podSandboxId)) continue;
      if (filter?.state?.state && filter.state.state !== c.state) continue;
      if (!matchLabels(c.config.labels ?? {}, filter?.labelSelector)) continue;
      out.push({
        id: c.id, podSandboxId: c.sandboxId, metadata: this.#containerMetadata(c), image: this.#imageSpec(c), imageRef: c.imageRef,
        state: c.state, createdAt: c.createdAt, labels: { ...c.config.labels }, annotations: { ...c.config.annotations },
      });
    }
    return out;
  }

  containerStatus(id: string): CriContainerStatus {
    const c = this.#container(id);
    if (!c) throw notFound(`container "${id}"`);
    return {
      id: c.id, metadata: this.#containerMetadata(c), state: c.state, createdAt: c.createdAt, startedAt: c.startedAt, finishedAt: c.finishedAt,
      exitCode: c.exitCode, image: this.#imageSpec(c), imageRef: c.imageRef, reason: c.reason, message: '',
      labels: { ...c.config.labels }, annotations: { ...c.config.annotations }, mounts: [], logPath: c.config.logPath ?? '', resources: null,
    };
  }

  #exit(c: Container, exitCode: number, reason: string): void {
    c.state = 'CONTAINER_EXITED';
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAt = String(this.#nowNs());
  }

  /** An ID or a unique prefix of one (containerd's truncindex). */
  #sandbox(id: string): Sandbox | undefined {
    return this.#sandboxes.get(id) ?? (id ? [...this.#sandboxes.values()].find((s) => s.id.startsWith(id)) : undefined);
  }

  #container(id: string): Container | undefined {
    return this.#containers.get(id) ?? (id ? [...this.#containers.values()].find((c) => c.id.startsWith(id)) : undefined);
  }

  #sandboxMetadata(sb: Sandbox): CriSandbox['metadata'] {
    const m = sb.config.metadata;
    return { name: m?.name ?? '', uid: m?.uid ?? '', namespace: m?.namespace ?? '', attempt: m?.attempt ?? 0 };
  }

  #containerMetadata(c: Container): CriContainer['metadata'] {
    return { name: c.config.metadata?.name ?? '', attempt: c.config.metadata?.attempt ?? 0 };
  }

  #imageSpec(c: Container): CriContainer['image'] {
    return { image: c.config.image?.image ?? '', annotations: {}, userSpecifiedImage: c.config.image?.userSpecifiedImage ?? '', runtimeHandler: '' };
  }
}
