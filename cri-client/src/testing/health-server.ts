/**
 * A gRPC health server (grpc.health.v1.Health/Check) whose answers a test sets, for tests of
 * gRPC probes. It listens on TCP (`host`, port 0 by default) because probes dial host:port.
 *
 *   const hs = await FakeHealthServer.start();
 *   t.after(() => hs.close());
 *   hs.set('', 'NOT_SERVING');
 */
import * as grpc from '@grpc/grpc-js';
import { decodeHealthCheckRequest, encodeHealthCheckResponse, GRPC_SERVING_STATUS, HEALTH_CHECK_METHOD } from '../grpc-health.js';

export type ServingStatusName = (typeof GRPC_SERVING_STATUS)[number];

export class FakeHealthServer {
  readonly port: number;
  readonly #server: grpc.Server;
  readonly #status = new Map<string, ServingStatusName>();
  /** Services asked about, in order. */
  readonly requests: string[] = [];
  /** When set, calls are never answered (the client's deadline ends them). */
  hang = false;

  private constructor(server: grpc.Server, port: number) {
    this.#server = server;
    this.port = port;
  }

  /**
   * Listens on `host`:`port` (port 0 = any free one). `serveHealth: false` registers no service at
   * all, so that a probe meets a gRPC server that does not implement the health protocol.
   */
  static async start(o: { host?: string; port?: number; serveHealth?: boolean } = {}): Promise<FakeHealthServer> {
    const { host = '127.0.0.1', port = 0, serveHealth = true } = o;
    const server = new grpc.Server();
    const box: { self?: FakeHealthServer } = {};
    const def: grpc.ServiceDefinition = {
      Check: {
        path: HEALTH_CHECK_METHOD,
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: { service: string }) => Buffer.from(v.service),
        // An object, not the bare string: grpc-js takes a falsy request ('') for a missing one.
        requestDeserialize: (b: Buffer) => ({ service: decodeHealthCheckRequest(b) }),
        responseSerialize: encodeHealthCheckResponse,
        responseDeserialize: (b: Buffer) => b,
      },
    };
    if (serveHealth) server.addService(def, {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, cb: grpc.sendUnaryData<number>) => {
        const s = box.self!;
        s.requests.push(call.request.service);
        if (s.hang) return;
        const st = s.#status.get(call.request.service);
        // The protocol's answer for a service the server does not know.
        if (st === undefined) return cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        cb(null, GRPC_SERVING_STATUS.indexOf(st));
      },
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    const self = new FakeHealthServer(server, bound);
    box.self = self;
    self.set('', 'SERVING');
    return self;
  }

  /** Sets what Check answers for `service` ('' = the whole server). */
  set(service: string, status: ServingStatusName): void {
    this.#status.set(service, status);
  }

  close(): Promise<void> {
    this.#server.forceShutdown();
    return Promise.resolve();
  }
}
