/**
 * The node-local cluster DNS resolver: informers → {@link ClusterIndex} → records, plus the
 * forwarder and cache for everything else, served on UDP and TCP. Every agent runs one; the
 * service proxy sends the kube-dns Service IP (10.96.0.10:53) to its address (docs/services.md).
 *
 *   start():  informers (Services, EndpointSlices, Namespaces; Pods for `verified` pod records)
 *             start in the background ─▶ upstreams read ─▶ sockets bound ─▶ serving
 *             (until the informers have listed once, cluster names that are not found are SERVFAIL)
 *   close():  sockets, then informers. Idempotent.
 *
 * The informers keep their cache while the API server is away (they only retry), so the
 * resolver keeps answering from the last state it saw.
 */
import type { Registry } from 'prom-client';
import { DisposableStore, systemClock, type Clock, type Logger } from '@nodelet/base';
import { ENDPOINTSLICES, Informer, NAMESPACES, PODS, SERVICES, type ApiClient, type EndpointSlice, type KubeObject, type Namespace, type Pod, type ResourceType, type Service } from '@nodelet/api/agent';
import { ResponseCache } from './cache.js';
import { ClusterIndex } from './cluster-index.js';
import { Forwarder, type Upstream } from './forwarder.js';
import { DnsHandler } from './handler.js';
import { DnsMetrics } from './metrics.js';
import { normalizeName } from './names.js';
import type { PodRecords } from './records.js';
import { DnsServer } from './server.js';
import { UpstreamSource } from './upstreams.js';

export interface NodeDnsOptions {
  api: ApiClient;
  /** Where to listen (UDP and TCP); port 0 picks one (tests). */
  bind: { ip: string; port: number };
  clusterDomain: string;
  /** The kube-dns Service IPs: `ns.dns.<zone>`, and never used as upstreams. */
  clusterDNS: readonly string[];
  /** The node's resolv.conf, for the upstreams. */
  resolvConf: string;
  podRecords: PodRecords;
  registry?: Registry;
  log: Logger;
  clock?: Clock;
  /** Record TTL (30) and negative-answer TTL (5). */
  ttl?: number;
  negativeTTL?: number;
  /** Upstreams to use instead of resolv.conf's (tests run their own on loopback). */
  upstreams?: readonly Upstream[];
  /** Longest time an upstream answer is cached (30 s, kubeadm's `cache 30`), and how many are kept. */
  cacheMaxTtlS?: number;
  cacheCapacity?: number;
  random?: () => number;
  /**
   * Informers the agent already runs (shared with the service proxy or the pods' service
   * variables): subscribed to, started if needed, not closed here. Missing ones are created and owned.
   */
  informers?: { services?: Informer<Service>; endpointSlices?: Informer<EndpointSlice>; namespaces?: Informer<Namespace>; pods?: Informer<Pod> };
}

export class NodeDns {
  readonly index: ClusterIndex;
  readonly #store = new DisposableStore();
  /** Every informer read (for `synced`), and the ones this resolver created and closes. */
  readonly #informers: Array<Informer<KubeObject>> = [];
  readonly #owned: Array<Informer<KubeObject>> = [];
  #server?: DnsServer;
  #closed?: Promise<void>;

  private constructor(index: ClusterIndex) {
    this.index = index;
  }

  static async start(o: NodeDnsOptions): Promise<NodeDns> {
    const clock = o.clock ?? systemClock;
    const dns = new NodeDns(new ClusterIndex({ now: () => clock.now() }));
    try {
      await dns.#start(o, clock);
      return dns;
    } catch (err) {
      await dns.close();
      throw err;
    }
  }

  /** The address it answers on (what the proxy sends the kube-dns Service IP to). */
  get address(): { ip: string; port: number } {
    return this.#server!.address;
  }

  /** True once every informer has listed once. */
  synced(): boolean {
    return this.index.synced();
  }

  async #start(o: NodeDnsOptions, clock: Clock): Promise<void> {
    const log = o.log;
    const index = this.index;
    // 1. Informers into the index.
    const watch = <T extends KubeObject>(resource: ResourceType<T>, shared: Informer<T> | undefined, add: (x: T) => void, del: (x: T) => void): void => {
      const inf = shared ?? new Informer<T>({ client: o.api, resource, clock, logger: log });
      this.#store.add(inf.on({ onAdd: add, onUpdate: (_old, x) => add(x), onDelete: del }));
      this.#informers.push(inf as unknown as Informer<KubeObject>);
      if (!shared) this.#owned.push(inf as unknown as Informer<KubeObject>);
    };
    const shared = o.informers ?? {};
    watch(SERVICES, shared.services, (s) => index.upsertService(s), (s) => index.deleteService(s));
    watch(ENDPOINTSLICES, shared.endpointSlices, (s) => index.upsertSlice(s), (s) => index.deleteSlice(s));
    watch(NAMESPACES, shared.namespaces, (n) => index.upsertNamespace(n), (n) => index.deleteNamespace(n));
    if (o.podRecords === 'verified') watch(PODS, shared.pods, (p) => index.upsertPod(p), (p) => index.deletePod(p));
    index.setSynced(() => this.#informers.every((i) => i.hasSynced()));
    for (const inf of this.#informers) inf.start();

    // 2. Upstreams, cache, forwarder.
    let upstreams: () => readonly Upstream[];
    if (o.upstreams) {
      const fixed = o.upstreams;
      upstreams = () => fixed;
    } else {
      const source = new UpstreamSource({ resolvConf: o.resolvConf, self: [o.bind.ip, ...o.clusterDNS], log, now: () => clock.now() });
      await source.refresh();
      upstreams = () => source.list();
    }
    const cache = new ResponseCache({ capacity: o.cacheCapacity, maxTtlS: o.cacheMaxTtlS, now: () => clock.now() });
    let serverLabel = '';
    const metrics = o.registry ? new DnsMetrics(o.registry, () => cache.counts(), () => serverLabel) : undefined;
    const forwarder = new Forwarder({ upstreams, log, observe: (to, rcode, s) => metrics?.upstream.observe({ proxy_name: 'forward', to, rcode: typeof rcode === 'number' ? String(rcode) : rcode }, s) });
    const handler = new DnsHandler({
      view: index,
      zone: { zone: normalizeName(o.clusterDomain), ttl: o.ttl ?? 30, negativeTTL: o.negativeTTL ?? 5, podRecords: o.podRecords, nameservers: o.clusterDNS },
      forwarder,
      cache,
      metrics,
      server: () => serverLabel,
      log,
      random: o.random,
    });

    // 3. Sockets.
    this.#server = await DnsServer.listen({ host: o.bind.ip, port: o.bind.port, handler: (m, p, f, s) => handler.handle(m, p, f, s), log });
    const a = this.#server.address;
    serverLabel = `dns://${a.ip.includes(':') ? `[${a.ip}]` : a.ip}:${a.port}`;
    log.info({ address: serverLabel, zone: o.clusterDomain }, 'Cluster DNS resolver listening');
  }

  /** Closes the sockets, then its own informers (shared ones only lose its handlers). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#server?.close();
      this.#store.dispose();
      await Promise.all(this.#owned.map((i) => i.close()));
    })();
    return this.#closed;
  }
}
