/**
 * The proxy's Prometheus metrics under kube-proxy's names (pkg/proxy/metrics), registered on the
 * registry the caller owns (the agent's, served on its `/metrics`), so several proxies can live
 * in one test process.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

function linear(start: number, width: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start + i * width);
}

export class ProxyMetrics {
  readonly syncDuration: Histogram;
  readonly syncFullDuration: Histogram;
  readonly syncPartialDuration: Histogram;
  readonly cleanupFailures: Counter;
  readonly lastSyncTimestamp: Gauge;
  readonly lastQueuedTimestamp: Gauge;
  readonly networkProgramming: Histogram;
  readonly syncFailures: Counter;
  readonly noLocalEndpoints: Gauge<'traffic_policy'>;
  readonly endpointChanges: Counter;
  readonly serviceChanges: Counter;
  readonly driftRepairs: Counter;
  readonly conntrackFailures: Counter;
  readonly tableServices: Gauge;
  readonly tableEndpoints: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.syncDuration = new Histogram({
      name: 'kubeproxy_sync_proxy_rules_duration_seconds',
      help: 'SyncProxyRules latency in seconds',
      buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
      registers,
    });
    this.syncFullDuration = new Histogram({
      name: 'kubeproxy_sync_full_proxy_rules_duration_seconds',
      help: 'SyncProxyRules latency in seconds for full resyncs',
      buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
      registers,
    });
    this.syncPartialDuration = new Histogram({
      name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds',
      help: 'SyncProxyRules latency in seconds for partial resyncs',
      buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
      registers,
    });
    this.cleanupFailures = new Counter({ name: 'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total', help: 'Cumulative proxy nftables cleanup failures', registers });
    this.lastSyncTimestamp = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', help: 'The last time proxy rules were successfully synced', registers });
    this.lastQueuedTimestamp = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds', help: 'The last time a sync of proxy rules was queued', registers });
    this.networkProgramming = new Histogram({
      name: 'kubeproxy_network_programming_duration_seconds',
      help: 'In Cluster Network Programming Latency in seconds',
      buckets: [...linear(0.25, 0.25, 2), ...linear(1, 1, 59), ...linear(60, 5, 12), ...linear(120, 30, 7)],
      registers,
    });
    this.syncFailures = new Counter({ name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total', help: 'Cumulative proxy nftables sync failures', registers });
    this.noLocalEndpoints = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
      help: 'Number of services with a Local traffic policy and no endpoints on this node',
      labelNames: ['traffic_policy'],
      registers,
    });
    this.endpointChanges = new Counter({ name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total', help: 'Cumulative proxy rules EndpointSlice changes', registers });
    this.serviceChanges = new Counter({ name: 'kubeproxy_sync_proxy_rules_service_changes_total', help: 'Cumulative proxy rules Service changes', registers });
    this.driftRepairs = new Counter({ name: 'nodelet_proxy_drift_repairs_total', help: 'Full syncs forced because another process changed the nftables table', registers });
    this.conntrackFailures = new Counter({ name: 'nodelet_proxy_conntrack_cleanup_failures_total', help: 'conntrack -D runs for stale UDP entries that failed', registers });
    this.tableServices = new Gauge({ name: 'nodelet_proxy_nftables_service_ports', help: 'Service ports in the table', registers });
    this.tableEndpoints = new Gauge({ name: 'nodelet_proxy_nftables_endpoints', help: 'Endpoint chains in the table', registers });
  }
}
