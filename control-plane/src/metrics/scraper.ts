/**
 * The control plane's metrics-server: every `resolutionMs` it lists the nodes and scrapes each
 * node's `/metrics/resource` in parallel, as its own identity (a bearer token the agent checks with
 * a TokenReview and authorizes with a SubjectAccessReview for `nodes/metrics`, granted by the
 * `system:metrics-server` cluster role), verifying the agent's serving certificate against the
 * kubelet CA. What it learns goes to a {@link MetricsStore}, which the API server's
 * `metrics.k8s.io` handlers read (apiserver/metrics-api.ts).
 *
 *   every resolution ─▶ list nodes ─▶ per node (own deadline): GET https://<InternalIP>:<port>/metrics/resource
 *                     ─▶ decode ─▶ store; a failed node is forgotten, a deleted node too
 *
 * Facts from metrics-server: the resolution (its deployments use 15 s, the least it accepts) and the
 * per-node timeout being under it, the address preference (InternalIP, then Hostname) and the port
 * from `status.daemonEndpoints.kubeletEndpoint`.
 */
import https from 'node:https';
import { isIP } from 'node:net';
import { NODES, type ApiClient, type Node } from '@nodelet/api';
import { AgentError, describeError, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import type { MetricsStore } from './metrics-store.js';
import { decodeResourceMetrics } from './resource-scrape.js';

export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;
/** One node's scrape; below the resolution so a round ends before the next is due. */
const NODE_TIMEOUT_MS = 10_000;
/** A kubelet's answer is a few hundred bytes per container; anything near this is not one. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const HTTP_CODES: Partial<Record<number, 'ERR_UNAUTHENTICATED' | 'ERR_PERMISSION_DENIED' | 'ERR_NOT_FOUND'>> = { 401: 'ERR_UNAUTHENTICATED', 403: 'ERR_PERMISSION_DENIED', 404: 'ERR_NOT_FOUND' };

export interface MetricsScraperOptions {
  /** The scraper's own API identity: lists nodes. */
  client: ApiClient;
  /** The bearer token presented to agents (the same identity). */
  token: string;
  /** The CA agents' serving certificates are verified against, read per scrape (it may rotate); undefined: not verified. */
  agentCa: () => string | undefined;
  store: MetricsStore;
  clock: Clock;
  log: Logger;
  resolutionMs?: number;
}

/** Where a node's agent answers, or undefined when it has no usable address. */
export function agentAddress(node: Node): { host: string; port: number } | undefined {
  const addresses = node.status?.addresses ?? [];
  const host = addresses.find((a) => a.type === 'InternalIP')?.address ?? addresses.find((a) => a.type === 'Hostname')?.address;
  if (!host) return undefined;
  return { host, port: Number(node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250) || 10250 };
}

export class MetricsScraper {
  readonly #o: MetricsScraperOptions;

  constructor(o: MetricsScraperOptions) {
    this.#o = o;
  }

  /** Scrapes at once and then every resolution until `signal` aborts; resolves when the last round ended. */
  run(signal: AbortSignal): Promise<void> {
    const job: PeriodicJob = this.#o.clock.every(this.#o.resolutionMs ?? DEFAULT_METRIC_RESOLUTION_MS, (s) => this.scrapeAll(s), {
      signal,
      immediate: true,
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Metrics scrape round failed'),
    });
    return job.stopped;
  }

  /** One round over every node. */
  async scrapeAll(signal: AbortSignal): Promise<void> {
    const { store, log } = this.#o;
    const nodes = (await this.#o.client.list(NODES, { signal })).items;
    const names = new Set(nodes.map((n) => n.metadata.name!));
    for (const gone of store.nodeNames().filter((n) => !names.has(n))) store.forget(gone);
    await Promise.all(
      nodes.map(async (node) => {
        const name = node.metadata.name!;
        try {
          store.store(name, decodeResourceMetrics(await this.scrape(node, AbortSignal.any([signal, AbortSignal.timeout(NODE_TIMEOUT_MS)]))));
        } catch (err) {
          if (signal.aborted) return;
          store.forget(name);
          log.warn({ node: name, err: describeError(err) }, 'Node metrics scrape failed');
        }
      }),
    );
  }

  /** GET of one node's /metrics/resource. */
  scrape(node: Node, signal: AbortSignal): Promise<string> {
    const addr = agentAddress(node);
    if (!addr) return Promise.reject(new AgentError('ERR_NOT_FOUND', `node ${node.metadata.name} has no InternalIP or Hostname address`));
    const ca = this.#o.agentCa();
    return new Promise<string>((resolve, reject) => {
      const req = https.get(
        {
          host: addr.host,
          port: addr.port,
          path: '/metrics/resource',
          servername: isIP(addr.host) ? undefined : addr.host,
          headers: { Authorization: `Bearer ${this.#o.token}`, Accept: 'text/plain' },
          ...(ca ? { ca } : {}),
          rejectUnauthorized: !!ca,
          agent: false,
          signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (d: Buffer) => {
            size += d.length;
            if (size > MAX_BODY_BYTES) req.destroy(new AgentError('ERR_RESOURCE_EXHAUSTED', `the answer is larger than ${MAX_BODY_BYTES} bytes`));
            else chunks.push(d);
          });
          res.on('error', reject);
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode === 200) resolve(body);
            else reject(new AgentError(HTTP_CODES[res.statusCode ?? 0] ?? 'ERR_UNAVAILABLE', `GET /metrics/resource: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
          });
        },
      );
      req.on('error', reject);
    });
  }
}
