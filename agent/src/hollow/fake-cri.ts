/**
 * A hollow node's container runtime: a CriClient that answers in-process from the shared fake
 * runtime model (`@nodelet/cri-client/fake-runtime`, the one the gRPC fake of unit tests serves;
 * containerd's state machine and error codes), after the delays a real containerd + CNI node takes for the calls that do work (docs/hollow-nodes.md):
 *
 *   RunPodSandbox 200 ms (pause container + CNI ADD; the IP comes from the node's pod CIDR)
 *   CreateContainer 30 ms, StartContainer 50 ms, StopContainer 20 ms, StopPodSandbox 50 ms (CNI DEL)
 *   PullImage 500 ms (every image is already present, so only pull policy Always pulls)
 *   everything else (status, list, remove): answered at once from memory
 *
 * Containers exit 0 on StopContainer (SIGTERM always works) and never exit by themselves; every
 * image is present; the pod network is the node's PodIpam. Stats are empty (no process to measure).
 * Exec probes succeed (exit 0); streaming (exec/attach/port-forward), checkpoints, container events
 * and metrics answer ERR_UNIMPLEMENTED, as a runtime without them does. Every call honours its signal.
 */
import { AgentError, systemClock, type Clock } from '@nodelet/base';
import type { CallOptions, CriClient, ImageService, RuntimeService } from '@nodelet/cri-client';
import { FakeRuntimeState, imageView } from '@nodelet/cri-client/fake-runtime';
import type { CriVersion } from '../kubecontainer/cri.js';
import { PodIpam } from './pod-ipam.js';

/** Milliseconds each working call takes; see the module comment for the defaults. */
export interface HollowDelays {
  runPodSandbox: number;
  createContainer: number;
  startContainer: number;
  stopContainer: number;
  stopPodSandbox: number;
  pullImage: number;
}

export const DEFAULT_HOLLOW_DELAYS: Readonly<HollowDelays> = {
  runPodSandbox: 200,
  createContainer: 30,
  startContainer: 50,
  stopContainer: 20,
  stopPodSandbox: 50,
  pullImage: 500,
};

export const HOLLOW_RUNTIME_NAME = 'hollow';
export const HOLLOW_RUNTIME_VERSION = 'v0.1.0';

export interface FakeCriOptions {
  delays?: Partial<HollowDelays>;
  clock?: Clock;
}

function unimplemented(rpc: string): Promise<never> {
  return Promise.reject(new AgentError('ERR_UNIMPLEMENTED', `${rpc} is not implemented by the hollow runtime`));
}

export class FakeCri implements CriClient {
  readonly endpoint = 'hollow://in-process';
  /** The pod network's addresses: hollow-host.ts gives it the node's pod CIDR. */
  readonly ipam = new PodIpam();
  readonly state: FakeRuntimeState;
  readonly runtime: RuntimeService;
  readonly image: ImageService;
  readonly #delays: HollowDelays;
  readonly #clock: Clock;
  #closed = false;

  constructor(o: FakeCriOptions = {}) {
    const ipam = this.ipam;
    this.state = new FakeRuntimeState({
      network: { setUp: () => ipam.allocate(), tearDown: (ip) => ipam.release(ip) },
      stopExitCode: 0,
      anyImagePresent: true,
    });
    this.#delays = { ...DEFAULT_HOLLOW_DELAYS, ...o.delays };
    this.#clock = o.clock ?? systemClock;
    this.runtime = this.#runtimeService();
    this.image = this.#imageService();
  }

  /** Later calls fail with ERR_UNAVAILABLE, as on a closed channel. Idempotent. */
  close(): void {
    this.#closed = true;
  }

  /** The Version reply connectCriClient's handshake would have given. */
  version(): CriVersion {
    return { version: '0.1.0', runtimeName: HOLLOW_RUNTIME_NAME, runtimeVersion: HOLLOW_RUNTIME_VERSION, runtimeApiVersion: 'v1' };
  }

  /** Waits `ms` (the work a real runtime would do), then checks the call may still go on. */
  async #work(ms: number, o?: CallOptions): Promise<void> {
    this.#check(o);
    if (ms > 0) {
      // A call in flight keeps the process alive, as its gRPC socket would; the Clock's timers do not.
      const hold = setInterval(() => undefined, 60_000);
      try {
        await this.#clock.sleep(ms, o?.signal);
      } finally {
        clearInterval(hold);
      }
    }
    this.#check(o);
  }

  #check(o?: CallOptions): void {
    o?.signal?.throwIfAborted();
    if (this.#closed) throw new AgentError('ERR_UNAVAILABLE', 'the hollow runtime is closed');
  }

  #runtimeService(): RuntimeService {
    const s = this.state;
    const d = this.#delays;
    const now = async <T>(o: CallOptions | undefined, f: () => T): Promise<T> => {
      this.#check(o);
      return f();
    };
    return {
      version: (_q, o) => now(o, () => this.version()),
      runPodSandbox: async (q, o) => {
        await this.#work(d.runPodSandbox, o);
        return { podSandboxId: s.runPodSandbox(q.config ?? {}, q.runtimeHandler ?? '') };
      },
      stopPodSandbox: async (q, o) => {
        await this.#work(d.stopPodSandbox, o);
        s.stopPodSandbox(q.podSandboxId);
        return {};
      },
      removePodSandbox: (q, o) => now(o, () => (s.removePodSandbox(q.podSandboxId), {})),
      podSandboxStatus: (q, o) => now(o, () => ({ status: s.podSandboxStatus(q.podSandboxId), info: {}, containersStatuses: [], timestamp: '0' })),
      listPodSandbox: (q, o) => now(o, () => ({ items: s.listPodSandbox(q.filter) })),
      createContainer: async (q, o) => {
        await this.#work(d.createContainer, o);
        return { containerId: s.createContainer(q.podSandboxId, q.config ?? {}) };
      },
      startContainer: async (q, o) => {
        await this.#work(d.startContainer, o);
        s.startContainer(q.containerId);
        return {};
      },
      stopContainer: async (q, o) => {
        await this.#work(d.stopContainer, o);
        s.stopContainer(q.containerId);
        return {};
      },
      removeContainer: (q, o) => now(o, () => (s.removeContainer(q.containerId), {})),
      listContainers: (q, o) => now(o, () => ({ containers: s.listContainers(q.filter) })),
      containerStatus: (q, o) => now(o, () => ({ status: s.containerStatus(q.containerId), info: {} })),
      updateContainerResources: (_q, o) => now(o, () => ({})),
      reopenContainerLog: (_q, o) => now(o, () => ({})),
      execSync: (_q, o) => now(o, () => ({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 })),
      exec: () => unimplemented('Exec'),
      attach: () => unimplemented('Attach'),
      portForward: () => unimplemented('PortForward'),
      containerStats: () => unimplemented('ContainerStats'),
      listContainerStats: (_q, o) => now(o, () => ({ stats: [] })),
      podSandboxStats: () => unimplemented('PodSandboxStats'),
      listPodSandboxStats: (_q, o) => now(o, () => ({ stats: [] })),
      updateRuntimeConfig: (_q, o) => now(o, () => ({})),
      status: (_q, o) =>
        now(o, () => ({
          status: {
            conditions: [
              { type: 'RuntimeReady', status: true, reason: '', message: '' },
              this.ipam.cidr
                ? { type: 'NetworkReady', status: true, reason: '', message: '' }
                : { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'the node has no pod CIDR yet' },
            ],
          },
          info: {},
        })),
      checkpointContainer: () => unimplemented('CheckpointContainer'),
      getContainerEvents: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new AgentError('ERR_UNIMPLEMENTED', 'GetContainerEvents is not implemented by the hollow runtime')) }),
      }),
      listMetricDescriptors: () => unimplemented('ListMetricDescriptors'),
      listPodSandboxMetrics: () => unimplemented('ListPodSandboxMetrics'),
    };
  }

  #imageService(): ImageService {
    const s = this.state;
    const now = async <T>(o: CallOptions | undefined, f: () => T): Promise<T> => {
      this.#check(o);
      return f();
    };
    return {
      listImages: (q, o) => now(o, () => ({ images: s.listImages(q.filter?.image?.image) })),
      imageStatus: (q, o) =>
        now(o, () => {
          const img = s.findImage(q.image?.image);
          return { image: img ? imageView(img) : null, info: {} };
        }),
      pullImage: async (q, o) => {
        await this.#work(this.#delays.pullImage, o);
        return { imageRef: s.pullImage(q.image?.image ?? '') };
      },
      removeImage: (q, o) => now(o, () => (s.removeImage(q.image?.image), {})),
      imageFsInfo: (_q, o) =>
        now(o, () => ({
          imageFilesystems: [{ timestamp: String(BigInt(this.#clock.now()) * 1_000_000n), fsId: { mountpoint: '/var/lib/hollow' }, usedBytes: { value: String(s.usedBytes()) }, inodesUsed: { value: '0' } }],
          containerFilesystems: [],
        })),
    };
  }
}
