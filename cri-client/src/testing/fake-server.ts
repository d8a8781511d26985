/**
 * FakeCriServer: a real gRPC server on a temporary unix socket serving the fake RuntimeService and
 * ImageService, like kubernetes' cri-client fake_runtime.go. Tests talk to it through the real
 * client, so serialization, deadlines and error translation are exercised end to end.
 *
 *   const fake = await FakeCriServer.start();
 *   t.after(() => fake.close());
 *   const cri = createCriClient({ endpoint: fake.endpoint });
 *   fake.runtime.injectError('RunPodSandbox', 'UNAVAILABLE');
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { loadCriPackageDefinition } from '../client.js';
import { CriError } from '../errors.js';
import { grpcStatusOf } from '../fake-runtime/index.js';
import { FakeRuntimeService } from './fake-runtime-service.js';
import { fakeRuntimeHandlers } from './runtime-handlers.js';
import { fakeImageHandlers } from './image-handlers.js';

type Handler = (req: never) => Promise<object> | object;

function adapt(state: FakeRuntimeService, rpc: string, fn: Handler | undefined): grpc.handleUnaryCall<object, object> {
  return (call, callback) => {
    const failure = state.enter(rpc, call.request);
    if (failure) return callback({ code: grpcStatusOf(failure), details: failure.message });
    if (state.isHanging(rpc)) return; // never answers; the client's deadline or signal ends the call
    if (!fn) return callback({ code: grpc.status.UNIMPLEMENTED, details: `method ${rpc} not implemented` });
    state
      .holdIfAsked(rpc, () => call.cancelled)
      .then(() => fn(call.request as never))
      .then(
        (reply) => callback(null, reply),
        (err: unknown) => {
          if (err instanceof CriError) callback({ code: grpcStatusOf(err), details: err.message });
          else callback({ code: grpc.status.INTERNAL, details: `fake handler crashed: ${String(err)}` });
        },
      );
  };
}

export interface FakeCriServerOptions {
  /** Share state between restarts or servers. */
  runtime?: FakeRuntimeService;
  /** Socket path; default a fresh temp dir. */
  socketPath?: string;
}

export class FakeCriServer {
  readonly runtime: FakeRuntimeService;
  readonly socketPath: string;
  readonly endpoint: string;
  #server: grpc.Server | undefined;
  readonly #tmpDir: string | undefined;

  private constructor(state: FakeRuntimeService, socketPath: string, tmpDir: string | undefined) {
    this.runtime = state;
    this.socketPath = socketPath;
    this.endpoint = `unix://${socketPath}`;
    this.#tmpDir = tmpDir;
  }

  static async start(opts: FakeCriServerOptions = {}): Promise<FakeCriServer> {
    const tmpDir = opts.socketPath ? undefined : await mkdtemp(join(tmpdir(), 'nodelet-fake-cri-'));
    const s = new FakeCriServer(opts.runtime ?? new FakeRuntimeService(), opts.socketPath ?? join(tmpDir as string, 'cri.sock'), tmpDir);
    await s.listen();
    return s;
  }

  /** (Re)binds the socket; used after {@link stop} to simulate a runtime restart. */
  async listen(): Promise<void> {
    if (this.#server) return;
    const def = loadCriPackageDefinition();
    const server = new grpc.Server();
    for (const [service, handlers] of [
      ['runtime.v1.RuntimeService', fakeRuntimeHandlers(this.runtime)],
      ['runtime.v1.ImageService', fakeImageHandlers(this.runtime)],
    ] as const) {
      const sdef = def[service] as ServiceDefinition;
      const impl: grpc.UntypedServiceImplementation = {};
      for (const rpc of Object.keys(sdef)) {
        if (rpc === 'GetContainerEvents') {
          impl[rpc] = ((call: grpc.ServerWritableStream<object, object>) => {
            const failure = this.runtime.enter(rpc, call.request);
            const events = this.runtime.containerEvents;
            if (events && !failure) {
              for (const ev of events) call.write(ev);
              return; // open until the client cancels
            }
            call.emit('error', { code: failure ? grpcStatusOf(failure) : grpc.status.UNIMPLEMENTED, details: failure?.message ?? 'method GetContainerEvents not implemented' });
          }) as grpc.handleServerStreamingCall<object, object>;
          continue;
        }
        impl[rpc] = adapt(this.runtime, rpc, (handlers as Record<string, Handler>)[rpc]);
      }
      server.addService(sdef as unknown as grpc.ServiceDefinition, impl);
    }
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(this.endpoint, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
    });
    this.#server = server;
  }

  /** Stops serving (in-flight calls are cut) but keeps the state: the runtime "went down". */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.forceShutdown();
    await rm(this.socketPath, { force: true });
  }

  /** Stops and removes the temp dir. Idempotent. */
  async close(): Promise<void> {
    await this.stop();
    if (this.#tmpDir) await rm(this.#tmpDir, { recursive: true, force: true });
  }
}
