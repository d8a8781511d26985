/**
 * Cluster DNS in the agent (docs/services.md): the node-local resolver and the pods' resolv.conf.
 * What agent.ts calls; everything else stays inside this folder.
 */
import type { Registry } from 'prom-client';
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { ApiClient } from '@nodelet/api/agent';
import type { ClusterDnsConfig } from './config.js';
import { NodeDns, type NodeDnsOptions } from './node-dns.js';
import { PodDnsConfigurer, type DnsEventSink } from './pod-dns-config.js';

export { NodeDns } from './node-dns.js';
export type { ClusterDnsConfig, ClusterDnsConfigFile, ClusterDnsFlags } from './config.js';
export { resolveDnsConfig } from './config.js';

/**
 * Starts the node-local resolver on `clusterDNSBindAddress` (default: `nodeIP`:53), or returns
 * undefined when it is disabled or cannot start (logged as an error: the pods keep running, only
 * cluster DNS on this node is missing until the agent restarts with the address free).
 */
export async function startClusterDns(o: {
  api: ApiClient;
  config: ClusterDnsConfig;
  nodeIP: string;
  registry: Registry;
  clock: Clock;
  log: Logger;
  /** The agent's shared informers (source/informers.ts), read but not closed by the resolver. */
  informers?: NodeDnsOptions['informers'];
}): Promise<NodeDns | undefined> {
  const c = o.config;
  if (!c.clusterDNSResolver) return undefined;
  const bind = c.clusterDNSBindAddress ?? { ip: o.nodeIP, port: 53 };
  try {
    return await NodeDns.start({
      api: o.api,
      bind,
      clusterDomain: c.clusterDomain,
      clusterDNS: c.clusterDNS,
      resolvConf: c.resolvConf,
      podRecords: c.clusterDNSPodRecords,
      registry: o.registry,
      clock: o.clock,
      log: o.log,
      informers: o.informers,
    });
  } catch (err) {
    o.log.error({ bind: `${bind.ip}:${bind.port}`, err: describeError(err) }, 'Cluster DNS resolver failed to start');
    return undefined;
  }
}

/** The pods' DNSConfig by the kubelet's rules, for PodRuntime's `podDns`. */
export function podDnsConfigurer(o: { config: ClusterDnsConfig; nodeIP: string; events: DnsEventSink; log: Logger }): PodDnsConfigurer {
  return new PodDnsConfigurer({
    settings: { clusterDNS: o.config.clusterDNS, clusterDomain: o.config.clusterDomain, resolvConf: o.config.resolvConf, nodeIPs: [o.nodeIP] },
    events: o.events,
    log: o.log,
  });
}
