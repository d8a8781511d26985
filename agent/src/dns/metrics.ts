/**
 * The resolver's metrics, on the agent's /metrics, under CoreDNS's names so existing dashboards
 * and alerts read them: `server` is `dns://<bind address>`, `zone` the zone that answered
 * (`cluster.local.`, `in-addr.arpa.`/`ip6.arpa.` for PTRs of cluster IPs, `.` for what was
 * forwarded or refused). nodelet-only: malformed queries dropped or answered FORMERR.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** CoreDNS's latency buckets (0.25 ms doubling to 8 s), so its dashboards' quantiles read ours. */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192];

export class DnsMetrics {
  readonly requests: Counter<'server' | 'zone' | 'proto' | 'family' | 'type'>;
  readonly responses: Counter<'server' | 'zone' | 'rcode'>;
  readonly duration: Histogram<'server' | 'zone' | 'type'>;
  readonly cacheHits: Counter<'server' | 'type'>;
  readonly cacheMisses: Counter<'server'>;
  readonly cacheEntries: Gauge<'server' | 'type'>;
  readonly upstream: Histogram<'proxy_name' | 'to' | 'rcode'>;
  readonly malformed: Counter<'server' | 'proto'>;

  constructor(registry: Registry, cacheCounts: () => { success: number; denial: number }, server: () => string) {
    const registers = [registry];
    this.requests = new Counter({ name: 'coredns_dns_requests_total', help: 'Counter of DNS requests made per zone, protocol and family', labelNames: ['server', 'zone', 'proto', 'family', 'type'], registers });
    this.responses = new Counter({ name: 'coredns_dns_responses_total', help: 'Counter of response status codes', labelNames: ['server', 'zone', 'rcode'], registers });
    this.duration = new Histogram({
      name: 'coredns_dns_request_duration_seconds',
      help: 'Histogram of the time (in seconds) each request took per zone',
      labelNames: ['server', 'zone', 'type'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.cacheHits = new Counter({ name: 'coredns_cache_hits_total', help: 'The count of cache hits', labelNames: ['server', 'type'], registers });
    this.cacheMisses = new Counter({ name: 'coredns_cache_misses_total', help: 'The count of cache misses', labelNames: ['server'], registers });
    this.cacheEntries = new Gauge({
      name: 'coredns_cache_entries',
      help: 'The number of elements in the cache',
      labelNames: ['server', 'type'],
      registers,
      collect() {
        const c = cacheCounts();
        this.set({ server: server(), type: 'success' }, c.success);
        this.set({ server: server(), type: 'denial' }, c.denial);
      },
    });
    this.upstream = new Histogram({
      name: 'coredns_proxy_request_duration_seconds',
      help: 'Histogram of the time each request took',
      labelNames: ['proxy_name', 'to', 'rcode'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.malformed = new Counter({ name: 'nodelet_dns_malformed_requests_total', help: 'DNS messages that could not be parsed as a query (answered FORMERR or dropped)', labelNames: ['server', 'proto'], registers });
  }
}
