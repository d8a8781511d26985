/**
 * The addresses outside the cluster network a Service port answers on (kube-proxy's
 * "externally accessible" services): `spec.externalIPs` and, for `type: LoadBalancer`, the
 * ingress IPs the servicelb controller wrote (`status.loadBalancer.ingress[].ip`), with the
 * `loadBalancerSourceRanges` that may reach the latter. Kept apart from model.ts so the
 * LoadBalancer pieces stay in their own files (render-external.ts, lb-addresses.ts).
 */
import { isIPv4 } from 'node:net';
import type { Service } from '@nodelet/api/agent';
import type { ServicePortModel } from './model.js';

export interface ExternalAddresses {
  /** `spec.externalIPs` (IPv4, sorted): answered, never put on the node (the user routes them here). */
  externalIPs?: string[];
  /** The LoadBalancer ingress IPs (IPv4, sorted). */
  loadBalancerIPs?: string[];
  /** `spec.loadBalancerSourceRanges` (IPv4 CIDRs); filter only the load-balancer IPs. */
  sourceRanges?: string[];
}

const sorted = (ips: Iterable<string>): string[] => [...new Set(ips)].sort();
const isCidr4 = (s: string): boolean => {
  const [ip, bits] = s.split('/');
  return !!ip && isIPv4(ip) && /^\d{1,2}$/.test(bits ?? '') && Number(bits) <= 32;
};

/** The external addresses of `svc` (empty fields left out, so a port model without them is unchanged). */
export function externalAddresses(svc: Service): ExternalAddresses {
  const out: ExternalAddresses = {};
  const ext = sorted((svc.spec?.externalIPs ?? []).filter((ip) => isIPv4(ip)));
  if (ext.length) out.externalIPs = ext;
  if (svc.spec?.type === 'LoadBalancer') {
    const lb = sorted((svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '').filter((ip) => isIPv4(ip)));
    if (lb.length) out.loadBalancerIPs = lb;
    const ranges = sorted((svc.spec.loadBalancerSourceRanges ?? []).map((r) => r.trim()).filter(isCidr4));
    if (lb.length && ranges.length) out.sourceRanges = ranges;
  }
  return out;
}

/** Whether the port answers on any external address. */
export function hasExternalAddresses(p: Pick<ServicePortModel, 'externalIPs' | 'loadBalancerIPs'>): boolean {
  return !!(p.externalIPs?.length || p.loadBalancerIPs?.length);
}
