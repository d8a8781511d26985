/**
 * The CRI `DNSConfig` of a pod sandbox, by the kubelet's rules (pkg/kubelet/network/dns/dns.go
 * GetPodDNS), i.e. what the runtime writes into the pod's /etc/resolv.conf:
 *
 *   dnsPolicy                      base
 *   ClusterFirst (default)         nameservers = clusterDNS; search <ns>.svc.<domain> svc.<domain> <domain>
 *                                  + the node's searches; options ndots:5
 *   ClusterFirst + hostNetwork     as Default (the kubelet's fallback)
 *   ClusterFirstWithHostNet        as ClusterFirst, host network or not
 *   Default                        the node's resolv.conf (`resolvConf`; '' = 127.0.0.1, search ".")
 *   None                           nothing
 *
 * then `spec.dnsConfig` is merged (nameservers and searches appended without duplicates, options
 * override by name) and the result is cut to the limits: 3 nameservers, 32 search domains of at most
 * 253 characters and 2048 characters in all (the limits since ExpandedDNSConfig went GA). A cut, or
 * ClusterFirst without clusterDNS, is reported as a Warning event (DNSConfigForming,
 * MissingClusterDNS) with the kubelet's message.
 */
import type { Pod } from '@nodelet/api/agent';
import type { Logger } from '@nodelet/base';
import type { PodSandboxConfig } from '../kubecontainer/cri.js';
import { readHostResolvConf, type ResolvConf } from './resolv-conf.js';

export type CriDnsConfig = NonNullable<PodSandboxConfig['dnsConfig']>;

export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
/** A search domain longer than a DNS subdomain can make glibc abort; the kubelet drops it. */
const MAX_SEARCH_DOMAIN_CHARS = 253;
const DEFAULT_DNS_OPTIONS = ['ndots:5'];

export interface PodDnsSettings {
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** Path of the node's resolv.conf; '' = none. */
  resolvConf: string;
  /** The node's IPs (for the '' resolvConf fallback: 127.0.0.1 or ::1 per family). */
  nodeIPs: readonly string[];
}

export interface DnsWarning {
  reason: 'DNSConfigForming' | 'MissingClusterDNS';
  message: string;
}

const unique = (xs: readonly string[]): string[] => [...new Set(xs)];

type DnsType = 'cluster' | 'host' | 'none';

function dnsType(pod: Pod): DnsType {
  switch (pod.spec?.dnsPolicy) {
    case 'None':
      return 'none';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
    case undefined:
      return pod.spec?.hostNetwork ? 'host' : 'cluster';
    default:
      // ClusterFirstWithHostNet; an unknown policy falls back to cluster DNS like the kubelet.
      return 'cluster';
  }
}

/** Options merged by name: later values replace earlier ones in place, new names are appended. */
function mergeOptions(existing: readonly string[], pod: ReadonlyArray<{ name: string; value?: string }>): string[] {
  const m = new Map<string, string>();
  for (const op of existing) {
    const i = op.indexOf(':');
    if (i >= 0) m.set(op.slice(0, i), op.slice(i + 1));
    else m.set(op, '');
  }
  for (const op of pod) m.set(op.name, op.value ?? '');
  return [...m].map(([k, v]) => (v ? `${k}:${v}` : k));
}

function fitSearches(searches: string[], warnings: DnsWarning[]): string[] {
  let cut = false;
  let s = searches;
  if (s.length > MAX_DNS_SEARCH_PATHS) {
    s = s.slice(0, MAX_DNS_SEARCH_PATHS);
    cut = true;
  }
  const kept = s.filter((d) => d.length <= MAX_SEARCH_DOMAIN_CHARS);
  if (kept.length !== s.length) cut = true;
  s = kept;
  while (s.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    s = s.slice(0, -1);
    cut = true;
  }
  if (cut) warnings.push({ reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${s.join(' ')}` });
  return s;
}

/** Pure: the DNSConfig for `pod` given the node's parsed resolv.conf (undefined when `resolvConf` is ''). */
export function podDnsConfig(pod: Pod, host: ResolvConf | undefined, s: PodDnsSettings): { config: Required<CriDnsConfig>; warnings: DnsWarning[] } {
  const warnings: DnsWarning[] = [];
  let servers = [...(host?.nameservers ?? [])];
  let searches = [...(host?.searches ?? [])];
  let options = [...(host?.options ?? [])];
  let type = dnsType(pod);
  if (type === 'none') {
    servers = [];
    searches = [];
    options = [];
  } else if (type === 'cluster') {
    if (s.clusterDNS.length > 0) {
      servers = [...s.clusterDNS];
      const ns = pod.metadata.namespace ?? 'default';
      if (s.clusterDomain) searches = unique([`${ns}.svc.${s.clusterDomain}`, `svc.${s.clusterDomain}`, s.clusterDomain, ...searches]);
      options = [...DEFAULT_DNS_OPTIONS];
    } else {
      warnings.push({
        reason: 'MissingClusterDNS',
        message: `pod: "${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`,
      });
      type = 'host';
    }
  }
  if (type === 'host' && !host) {
    servers = unique(s.nodeIPs.length ? s.nodeIPs.map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1')) : ['127.0.0.1']);
    searches = ['.'];
  }
  const dc = pod.spec?.dnsConfig;
  if (dc) {
    servers = unique([...servers, ...(dc.nameservers ?? [])]);
    searches = unique([...searches, ...(dc.searches ?? [])]);
    options = mergeOptions(options, dc.options ?? []);
  }
  if (servers.length > MAX_DNS_NAMESERVERS) {
    servers = servers.slice(0, MAX_DNS_NAMESERVERS);
    warnings.push({ reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}` });
  }
  searches = fitSearches(searches, warnings);
  return { config: { servers, searches, options }, warnings };
}

/** Where the configurer reports warnings (the agent's event recorder). */
export interface DnsEventSink {
  event(pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/**
 * Reads the node's resolv.conf for each sandbox (as the kubelet does, so edits apply to new pods)
 * and returns the pod's DNSConfig, reporting cuts as events. Throws ERR_FAILED_PRECONDITION when
 * `resolvConf` is set but unreadable: the sandbox is not created with a guessed configuration.
 */
export class PodDnsConfigurer {
  readonly #s: PodDnsSettings;
  readonly #events?: DnsEventSink;
  readonly #log?: Logger;

  constructor(o: { settings: PodDnsSettings; events?: DnsEventSink; log?: Logger }) {
    this.#s = o.settings;
    this.#events = o.events;
    this.#log = o.log;
  }

  async forPod(pod: Pod, signal?: AbortSignal): Promise<CriDnsConfig> {
    const host = this.#s.resolvConf ? await readHostResolvConf(this.#s.resolvConf, { signal }) : undefined;
    const { config, warnings } = podDnsConfig(pod, host, this.#s);
    for (const w of warnings) {
      this.#events?.event(pod, 'Warning', w.reason, w.message);
      this.#log?.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, reason: w.reason, detail: w.message }, 'Pod DNS configuration adjusted');
    }
    return config;
  }
}
