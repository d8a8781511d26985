/**
 * The gRPC fake's runtime: the shared model of sandboxes, containers and images
 * (`@nodelet/cri-client/fake-runtime`, containerd's behaviour, pinned by its tests) plus what tests
 * drive at the process boundary: recorded calls, injected failures and hangs, runtime conditions,
 * the Version reply, ExecSync answers and the streaming URL.
 * CheckpointContainer, GetContainerEvents (unless `containerEvents` is set) and the metrics RPCs are
 * UNIMPLEMENTED, as in containerd 1.6.
 */
import type * as p from '@nodelet/proto';
import { fakeRuntimeError, FakeRuntimeState, type FakeRuntimeStateOptions, type GrpcStatusName } from '../fake-runtime/index.js';
import type { CriError } from '../errors.js';

export type { FakeContainer, FakeImage, FakeSandbox, GrpcStatusName } from '../fake-runtime/index.js';
export { imageIdFor, normalizeRef } from '../fake-runtime/index.js';

/** A failure a handler answers with (`rpc` names the call, for diagnostics). */
export function rpcError(code: GrpcStatusName, details: string, rpc = ''): CriError {
  return fakeRuntimeError(rpc, code, details);
}

export interface RecordedCall {
  rpc: string;
  request: unknown;
}

/** A call held in flight by {@link FakeRuntimeService.hold}. */
export interface HeldCall {
  /** Resolves once the call arrived and is being held. */
  readonly reached: Promise<void>;
  /** Lets the held call be handled and answered. */
  release(): void;
  /** Whether the client cancelled the call while it was held (read live until the release). */
  readonly cancelled: boolean;
}

export interface InjectedFailure {
  code: GrpcStatusName;
  details: string;
  /** How many calls fail; Infinity for all (default 1). */
  times: number;
}

/** Shared state; the service handlers read and write it. Tests poke it directly. */
export class FakeRuntimeService extends FakeRuntimeState {
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
  readonly #holds = new Map<string, (isCancelled: () => boolean) => Promise<void>>();

  constructor(o: FakeRuntimeStateOptions = {}) {
    super(o);
  }

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

  /**
   * Holds the next call of `rpc` in flight, before it is handled, until `release()`: the time a
   * real runtime spends creating a task, for tests of what a cancellation meanwhile does.
   */
  hold(rpc: string): HeldCall {
    let reached!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((r) => (reached = r));
    const released = new Promise<void>((r) => (release = r));
    let live: (() => boolean) | undefined;
    let atRelease: boolean | undefined;
    this.#holds.set(rpc, (isCancelled) => {
      live = isCancelled;
      reached();
      return released.then(() => {
        atRelease = isCancelled();
      });
    });
    return {
      reached: arrived,
      release,
      get cancelled() {
        return atRelease ?? live?.() ?? false;
      },
    };
  }

  /** Called by the server for a call of `rpc`: resolves when the call may be handled (at once unless held). */
  holdIfAsked(rpc: string, isCancelled: () => boolean): Promise<void> {
    const enter = this.#holds.get(rpc);
    if (!enter) return Promise.resolve();
    this.#holds.delete(rpc);
    return enter(isCancelled);
  }

  /** Called by every handler first: records the call and returns an injected failure, if any. */
  enter(rpc: string, request: unknown): CriError | undefined {
    this.calls.push({ rpc, request });
    const list = this.#failures.get(rpc);
    const f = list?.[0];
    if (!f) return undefined;
    f.times -= 1;
    if (f.times <= 0) list.shift();
    return rpcError(f.code, f.details, rpc);
  }

  callsOf(rpc: string): unknown[] {
    return this.calls.filter((c) => c.rpc === rpc).map((c) => c.request);
  }
}
