/**
 * The rules for a port's external addresses (model-external.ts), as kube-proxy's nftables mode
 * writes them: each external IP and load-balancer IP is one more key of `service-ips` leading to
 * the port's `external-…` chain (masquerade under eTP Cluster; local endpoints only, client
 * address kept, under eTP Local), or of `no-endpoint-services` when nothing may answer; a port
 * with `loadBalancerSourceRanges` gets a `firewall-…` chain reached from `firewall-ips` before
 * DNAT, which drops new connections to its load-balancer IPs from anywhere else.
 *
 *   prerouting/output (filter, dstnat-10) ─▶ firewall-check ─▶ @firewall-ips ─▶ firewall-… (saddr not allowed: drop)
 */
import type { ServicePortModel } from './model.js';
import { externalChainName } from './names.js';

/** What render.ts's per-port builder offers this file. */
export interface ExternalSink {
  chain(name: string): string[];
  element(container: 'service-ips' | 'no-endpoint-services' | 'firewall-ips', key: string, e?: { value?: string; comment?: string }): void;
}

/** The `firewall-…` chain of a port with source ranges (same hash scheme as the other per-port chains). */
export const firewallChainName = (p: ServicePortModel): string => externalChainName(p).replace(/^external-/, 'firewall-');

/**
 * Adds `p`'s external addresses to `b`. `hasEndpoints`: any usable endpoint in the cluster;
 * `hasExternal`: one external traffic may use under the port's eTP.
 */
export function renderExternalAddresses(b: ExternalSink, p: ServicePortModel, x: { hasEndpoints: boolean; hasExternal: boolean; svcName: string }): void {
  const addrs = [...new Set([...(p.externalIPs ?? []), ...(p.loadBalancerIPs ?? [])])];
  for (const ip of addrs) {
    const key = `${ip} . ${p.protocol} . ${p.port}`;
    // As for NodePorts: the external chain whenever the cluster has endpoints (it short-circuits
    // pods and the node itself), the drop/reject of the endpoints check when the policy has none.
    if (x.hasEndpoints) b.element('service-ips', key, { value: `goto ${externalChainName(p)}` });
    if (!x.hasExternal) b.element('no-endpoint-services', key, { comment: x.svcName, value: x.hasEndpoints ? 'drop' : 'goto reject-chain' });
  }
  if (p.sourceRanges?.length && p.loadBalancerIPs?.length) {
    const fw = firewallChainName(p);
    b.chain(fw).push(`ip saddr != { ${p.sourceRanges.join(', ')} } drop`);
    for (const ip of p.loadBalancerIPs) b.element('firewall-ips', `${ip} . ${p.protocol} . ${p.port}`, { comment: x.svcName, value: `goto ${fw}` });
  }
}

/** The fixed chains that run the source-range check, before DNAT (kube-proxy's dstnat-10). */
export function firewallBaseChains(): Array<[string, string[]]> {
  return [
    ['filter-prerouting-pre-dnat', ['type filter hook prerouting priority -110; policy accept;', 'ct state new jump firewall-check']],
    ['filter-output-pre-dnat', ['type filter hook output priority -110; policy accept;', 'ct state new jump firewall-check']],
    ['firewall-check', ['ip daddr . meta l4proto . th dport vmap @firewall-ips']],
  ];
}
