/**
 * The service proxy's configuration: the `proxy:` section of the agent config file, overlaid by
 * the `--proxy-mode`, `--service-cidr`, `--cluster-cidr` and `--nodeport-addresses` flags.
 * Field names follow KubeProxyConfiguration where one exists (`mode`, `clusterCIDR`,
 * `nodePortAddresses`, `nftables.minSyncPeriod`/`syncPeriod`); see docs/services.md.
 * `resolveProxyConfig` is pure and throws ERR_INVALID_ARGUMENT naming the field.
 */
import { isIPv4 } from 'node:net';
import { AgentError, parseDuration } from '@nodelet/base';

export type ProxyMode = 'nftables' | 'iptables' | 'none';

/** The `proxy:` section of the config file (all optional). */
export interface ProxyConfigFile {
  mode?: string;
  /** The API server's service IP range (`--service-cluster-ip-range`); default 10.96.0.0/16. */
  serviceCIDR?: string;
  /** The pods' range; traffic to a Service from outside it is masqueraded. Default 10.244.0.0/16. */
  clusterCIDR?: string;
  /** CIDRs whose node addresses accept NodePorts; empty = every local address. */
  nodePortAddresses?: string[];
  /** NodePorts also answer on 127.0.0.1 (sets net.ipv4.conf.all.route_localnet=1). Default true. */
  localhostNodePorts?: boolean;
  minSyncPeriod?: string;
  syncPeriod?: string;
  /** How often the live table is compared with the last one written (nodelet-only). */
  driftCheckPeriod?: string;
  /** Delete the table when the agent stops cleanly. Default false: traffic keeps flowing across restarts. */
  cleanupOnShutdown?: boolean;
  /** The node-local DNS resolver: `kube-system/kube-dns` port 53 is sent here instead of to its endpoints. */
  localDNS?: { ip?: string; port?: number };
}

/** Flags shared by `nodelet agent` and `nodelet proxy`. */
export interface ProxyFlags {
  proxyMode?: string;
  serviceCidr?: string;
  clusterCidr?: string;
  nodeportAddresses?: string;
}

export interface ProxyConfig {
  mode: ProxyMode;
  serviceCIDR: string;
  clusterCIDR: string;
  nodePortAddresses: string[];
  localhostNodePorts: boolean;
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  driftCheckPeriodMs: number;
  cleanupOnShutdown: boolean;
  localDNS?: { ip: string; port: number };
}

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/16';
export const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';

function invalid(field: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: ${field}: ${why}`);
}

/** Throws unless `v` is an IPv4 CIDR with no host bits set. */
export function ipv4Cidr(field: string, v: unknown): string {
  const m = typeof v === 'string' ? /^([0-9.]+)\/(\d{1,2})$/.exec(v) : null;
  if (!m || !isIPv4(m[1]!) || Number(m[2]) > 32) throw invalid(field, `must be an IPv4 CIDR like "10.96.0.0/16", got ${JSON.stringify(v)}`);
  return v as string;
}

function duration(field: string, v: unknown, dflt: string): number {
  const raw = v ?? dflt;
  let ms = NaN;
  try {
    // A JSON number is milliseconds; a string is a Go duration, which needs a unit ("1s").
    if (typeof raw === 'number') ms = raw;
    else if (typeof raw === 'string') ms = parseDuration(raw, { bare: 'reject' });
  } catch {
    // reported below
  }
  if (!(ms > 0)) throw invalid(field, `must be a positive duration like "1s", got ${JSON.stringify(raw)}`);
  return ms;
}

function bool(field: string, v: unknown, dflt: boolean): boolean {
  const b = v ?? dflt;
  if (typeof b !== 'boolean') throw invalid(field, `must be true or false, got ${JSON.stringify(b)}`);
  return b;
}

/** Merges file and flags, applies defaults, validates. Pure. */
export function resolveProxyConfig(file: ProxyConfigFile | undefined, flags: ProxyFlags = {}): ProxyConfig {
  const f = file ?? {};
  if (typeof f !== 'object' || Array.isArray(f)) throw invalid('proxy', 'must be a map');
  const mode = flags.proxyMode ?? f.mode ?? 'nftables';
  if (mode !== 'nftables' && mode !== 'iptables' && mode !== 'none') {
    throw invalid(flags.proxyMode !== undefined ? '--proxy-mode' : 'proxy.mode', `must be one of nftables, iptables, none, got ${JSON.stringify(mode)}`);
  }
  const npa = flags.nodeportAddresses !== undefined ? flags.nodeportAddresses.split(',').map((s) => s.trim()).filter(Boolean) : (f.nodePortAddresses ?? []);
  if (!Array.isArray(npa)) throw invalid('proxy.nodePortAddresses', 'must be a list of CIDRs');
  let localDNS: ProxyConfig['localDNS'];
  if (f.localDNS !== undefined && f.localDNS !== null) {
    const { ip, port } = f.localDNS;
    if (typeof ip !== 'string' || !isIPv4(ip)) throw invalid('proxy.localDNS.ip', `must be an IPv4 address, got ${JSON.stringify(ip)}`);
    const p = port ?? 53;
    if (!Number.isInteger(p) || p < 1 || p > 65535) throw invalid('proxy.localDNS.port', `must be a port number, got ${JSON.stringify(port)}`);
    localDNS = { ip, port: p };
  }
  return {
    mode,
    serviceCIDR: ipv4Cidr(flags.serviceCidr !== undefined ? '--service-cidr' : 'proxy.serviceCIDR', flags.serviceCidr ?? f.serviceCIDR ?? DEFAULT_SERVICE_CIDR),
    clusterCIDR: ipv4Cidr(flags.clusterCidr !== undefined ? '--cluster-cidr' : 'proxy.clusterCIDR', flags.clusterCidr ?? f.clusterCIDR ?? DEFAULT_CLUSTER_CIDR),
    nodePortAddresses: npa.map((c, i) => ipv4Cidr(`proxy.nodePortAddresses[${i}]`, c)),
    localhostNodePorts: bool('proxy.localhostNodePorts', f.localhostNodePorts, true),
    minSyncPeriodMs: duration('proxy.minSyncPeriod', f.minSyncPeriod, '1s'),
    syncPeriodMs: duration('proxy.syncPeriod', f.syncPeriod, '30s'),
    driftCheckPeriodMs: duration('proxy.driftCheckPeriod', f.driftCheckPeriod, '5s'),
    cleanupOnShutdown: bool('proxy.cleanupOnShutdown', f.cleanupOnShutdown, false),
    localDNS,
  };
}
