/**
 * The health-check servers of `externalTrafficPolicy: Local` LoadBalancer Services, as
 * kube-proxy serves them: one HTTP listener per `spec.healthCheckNodePort`, answering any path
 * with 200 while this node has a usable local endpoint of the Service and 503 otherwise, so an
 * external load balancer sends traffic only to nodes that keep it. The body is kube-proxy's JSON
 * (service namespace/name, localEndpoints, serviceProxyHealthy) and the endpoint count is also in
 * `X-Load-Balancing-Endpoint-Weight`.
 */
import { createServer, type Server } from 'node:http';
import type { Service } from '@nodelet/api/agent';
import { describeError, type Logger } from '@nodelet/base';
import { categorize, type ServicePortModel } from './model.js';

interface Entry {
  namespace: string;
  name: string;
  localEndpoints: number;
}

/** healthCheckNodePort → the Service it reports on and its local endpoint count. */
export function healthChecks(services: readonly Service[], ports: readonly ServicePortModel[], nodeName: string): Map<number, Entry> {
  const out = new Map<number, Entry>();
  for (const s of services) {
    const hc = s.spec?.healthCheckNodePort;
    if (s.spec?.type !== 'LoadBalancer' || s.spec.externalTrafficPolicy !== 'Local' || !hc) continue;
    const namespace = s.metadata.namespace ?? 'default';
    const name = s.metadata.name ?? '';
    const local = new Set<string>();
    for (const p of ports) if (p.namespace === namespace && p.name === name) for (const e of categorize(p, nodeName).local) local.add(e.ip);
    out.set(hc, { namespace, name, localEndpoints: local.size });
  }
  return out;
}

export class HealthCheckServers {
  readonly #bind: string;
  readonly #log: Logger;
  readonly #servers = new Map<number, Server>();
  #entries = new Map<number, Entry>();

  constructor(o: { bindAddress?: string; log: Logger }) {
    this.#bind = o.bindAddress ?? '0.0.0.0';
    this.#log = o.log;
  }

  /** Serves `entries` from now on: new ports start listening, gone ones close. */
  update(entries: Map<number, Entry>): void {
    this.#entries = entries;
    for (const [port, srv] of this.#servers) {
      if (entries.has(port)) continue;
      srv.close();
      this.#servers.delete(port);
    }
    for (const port of entries.keys()) if (!this.#servers.has(port)) this.#listen(port);
  }

  #listen(port: number): void {
    const srv = createServer((req, res) => {
      const e = this.#entries.get(port);
      if (!e) return void res.writeHead(503).end();
      const body = JSON.stringify({ service: { namespace: e.namespace, name: e.name }, localEndpoints: e.localEndpoints, serviceProxyHealthy: true }, null, '\t');
      res.writeHead(e.localEndpoints > 0 ? 200 : 503, {
        'Content-Type': 'application/json',
        'X-Content-Type-Options': 'nosniff',
        'X-Load-Balancing-Endpoint-Weight': String(e.localEndpoints),
      });
      res.end(body);
    });
    // A port someone else holds is logged and tried again at the next sync, never fatal.
    srv.on('error', (err) => {
      this.#log.warn({ port, err: describeError(err) }, 'Health-check node port could not be served');
      if (this.#servers.get(port) === srv) this.#servers.delete(port);
    });
    srv.listen(port, this.#bind);
    this.#servers.set(port, srv);
  }

  /** Closes every listener. */
  close(): void {
    for (const srv of this.#servers.values()) srv.close();
    this.#servers.clear();
  }
}
