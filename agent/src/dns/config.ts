/**
 * The agent's DNS settings: the kubelet's `clusterDNS`, `clusterDomain` and `resolvConf` (also the
 * flags `--cluster-dns`, `--cluster-domain`, `--resolv-conf`), and nodelet's own for the node-local
 * resolver. Validated once at start; a bad value names its field, like the rest of the config.
 *
 *   clusterDNS: [10.96.0.10]          nameservers of ClusterFirst pods (the kube-dns Service IP)
 *   clusterDomain: cluster.local
 *   resolvConf: /etc/resolv.conf      base of Default pods, upstreams of the resolver; '' = none
 *   clusterDNSResolver: true          run the node-local resolver
 *   clusterDNSBindAddress: ""         ip or ip:port ([v6]:port); '' = the node's InternalIP, port 53
 *   clusterDNSPodRecords: insecure    a-b-c-d.<ns>.pod.<domain>: insecure | verified | disabled
 */
import { isIP } from 'node:net';
import { AgentError } from '@nodelet/base';
import type { PodRecords } from './records.js';

export const DEFAULT_CLUSTER_DNS = '10.96.0.10';
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

/** The file fields (KubeletConfiguration names where the kubelet has them). */
export interface ClusterDnsConfigFile {
  clusterDNS?: string[];
  clusterDomain?: string;
  resolvConf?: string;
  clusterDNSResolver?: boolean;
  clusterDNSBindAddress?: string;
  clusterDNSPodRecords?: string;
}

export interface ClusterDnsFlags {
  /** `--cluster-dns 10.96.0.10[,…]` */
  clusterDns?: string;
  clusterDomain?: string;
  resolvConf?: string;
}

export interface ClusterDnsConfig {
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
  clusterDNSResolver: boolean;
  /** Undefined: the node's InternalIP, port 53. */
  clusterDNSBindAddress?: { ip: string; port: number };
  clusterDNSPodRecords: PodRecords;
}

function invalid(field: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: ${field}: ${why}`);
}

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `ip`, `ip:port` or `[ipv6]:port` (port 53 when none is given). */
export function parseBindAddress(field: string, v: string): { ip: string; port: number } {
  const bad = (): AgentError => invalid(field, `must be an IP, IP:port or [IPv6]:port, got ${JSON.stringify(v)}`);
  let ip: string;
  let port = 53;
  const v6 = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(v);
  const v4 = /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(v);
  if (v6) {
    ip = v6[1]!;
    if (v6[2] !== undefined) port = Number(v6[2]);
    if (isIP(ip) !== 6) throw bad();
  } else if (isIP(v) === 6) {
    ip = v;
  } else if (v4) {
    ip = v4[1]!;
    if (v4[2] !== undefined) port = Number(v4[2]);
    if (isIP(ip) !== 4) throw bad();
  } else {
    throw bad();
  }
  if (port > 65535) throw bad();
  return { ip, port };
}

/** Pure: file + flags → validated DNS settings (flags win). */
export function resolveDnsConfig(file: ClusterDnsConfigFile, flags: ClusterDnsFlags): ClusterDnsConfig {
  const dnsField = flags.clusterDns !== undefined ? '--cluster-dns' : 'clusterDNS';
  const rawDns: unknown = flags.clusterDns !== undefined ? flags.clusterDns.split(',').map((s) => s.trim()).filter(Boolean) : (file.clusterDNS ?? [DEFAULT_CLUSTER_DNS]);
  if (!Array.isArray(rawDns) || !rawDns.every((x) => typeof x === 'string' && isIP(x))) throw invalid(dnsField, `must be a list of IP addresses, got ${JSON.stringify(rawDns)}`);
  const domainField = flags.clusterDomain !== undefined ? '--cluster-domain' : 'clusterDomain';
  const rawDomain: unknown = flags.clusterDomain ?? file.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  if (typeof rawDomain !== 'string' || !DNS_SUBDOMAIN.test(rawDomain.replace(/\.$/, '').toLowerCase())) throw invalid(domainField, `must be a DNS domain like "cluster.local", got ${JSON.stringify(rawDomain)}`);
  const resolvConf: unknown = flags.resolvConf ?? file.resolvConf ?? '/etc/resolv.conf';
  if (typeof resolvConf !== 'string') throw invalid('resolvConf', `must be a path or "", got ${JSON.stringify(resolvConf)}`);
  const enabled: unknown = file.clusterDNSResolver ?? true;
  if (typeof enabled !== 'boolean') throw invalid('clusterDNSResolver', `must be true or false, got ${JSON.stringify(enabled)}`);
  const bind: unknown = file.clusterDNSBindAddress ?? '';
  if (typeof bind !== 'string') throw invalid('clusterDNSBindAddress', `must be a string, got ${JSON.stringify(bind)}`);
  const pods: unknown = file.clusterDNSPodRecords ?? 'insecure';
  if (pods !== 'insecure' && pods !== 'verified' && pods !== 'disabled') throw invalid('clusterDNSPodRecords', `must be one of insecure, verified, disabled, got ${JSON.stringify(pods)}`);
  return {
    clusterDNS: rawDns as string[],
    clusterDomain: rawDomain.replace(/\.$/, '').toLowerCase(),
    resolvConf,
    clusterDNSResolver: enabled,
    ...(bind ? { clusterDNSBindAddress: parseBindAddress('clusterDNSBindAddress', bind) } : {}),
    clusterDNSPodRecords: pods,
  };
}
