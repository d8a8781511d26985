import { isIP } from 'node:net';
import { AgentError } from '@nodelet/base';
import { parseNetworkConfig } from '../conflist.js';
import type { NetworkConfigList, PluginConf } from '../types.js';

/** The node's real pod network (what `nodelet-cni` delegates to). */
export interface NodeChainOptions {
  /** Network name of the chain (and its cache entries). Default "nodelet-pods". */
  name?: string;
  /** The node's pod CIDR; until it is known ADD answers "try again later". */
  podCIDR?: string;
  /** Linux bridge the pods attach to. Default "cni0". */
  bridgeName?: string;
  mtu?: number;
  /** Lets a pod reach itself through a Service/hostPort (bridge hairpinMode). */
  hairpin?: boolean;
  /** Masquerade pod traffic leaving the pod CIDR (bridge ipMasq). Default false. */
  ipMasq?: boolean;
  /** hostPort support through the portmap plugin (capability portMappings). Default true. */
  portmap?: boolean;
  /** Traffic shaping through the bandwidth plugin (capability bandwidth). */
  bandwidth?: boolean;
  /** The firewall plugin (iptables FORWARD rules for the pod). */
  firewall?: boolean;
  /** The tuning plugin, with these sysctls inside the pod. */
  tuning?: boolean | { sysctl?: Record<string, string> };
  /** host-local's data dir; default its own (/var/lib/cni/networks). */
  ipamDataDir?: string;
  cniVersion?: string;
}

export const DEFAULT_CHAIN_NAME = 'nodelet-pods';

/** The default chain's conflist: bridge + host-local on the pod CIDR, then portmap etc. */
export function buildNodeChain(opts: NodeChainOptions & { podCIDR: string }): NetworkConfigList {
  assertCIDR(opts.podCIDR);
  const ipam: PluginConf['ipam'] = { type: 'host-local', ranges: [[{ subnet: opts.podCIDR }]], routes: [{ dst: opts.podCIDR.includes(':') ? '::/0' : '0.0.0.0/0' }] };
  if (opts.ipamDataDir) ipam.dataDir = opts.ipamDataDir;
  const bridge: PluginConf = { type: 'bridge', bridge: opts.bridgeName ?? 'cni0', isGateway: true, ipMasq: opts.ipMasq ?? false, hairpinMode: opts.hairpin ?? false, ipam };
  if (opts.mtu) bridge.mtu = opts.mtu;
  const plugins: PluginConf[] = [bridge];
  if (opts.portmap ?? true) plugins.push({ type: 'portmap', snat: true, capabilities: { portMappings: true } });
  if (opts.bandwidth) plugins.push({ type: 'bandwidth', capabilities: { bandwidth: true } });
  if (opts.firewall) plugins.push({ type: 'firewall' });
  if (opts.tuning) plugins.push({ type: 'tuning', ...(typeof opts.tuning === 'object' && opts.tuning.sysctl ? { sysctl: opts.tuning.sysctl } : {}) });
  const doc = { cniVersion: opts.cniVersion ?? '1.0.0', name: opts.name ?? DEFAULT_CHAIN_NAME, plugins };
  return parseNetworkConfig(JSON.stringify(doc, null, 2), '(node chain)');
}

/**
 * portmap up to 1.2 fails CHECK for IPv4-only attachments because it always looks for its IPv6
 * chain (containernetworking/plugins#819). The node chain skips portmap in CHECK in that case.
 */
export function skipKnownBrokenCheck(pluginType: string, cached: { ips?: Array<{ address: string }> }): boolean {
  return pluginType === 'portmap' && !(cached.ips ?? []).some((ip) => ip.address.includes(':'));
}

function assertCIDR(cidr: string): void {
  const [ip, bits, extra] = cidr.split('/');
  const family = isIP(ip ?? '');
  const n = Number(bits);
  if (extra !== undefined || family === 0 || !/^\d+$/.test(bits ?? '') || n > (family === 4 ? 32 : 128)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `pod CIDR "${cidr}" is not a CIDR like 10.244.1.0/24`);
  }
}
