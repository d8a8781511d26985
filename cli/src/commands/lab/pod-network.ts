/**
 * The lab's side of the pod network across nodes: nothing but choosing the VXLAN network and
 * clearing what the host's agent left. The lab adds no route: every node's agent routes to the
 * other nodes' pod CIDRs itself (agent/src/network/, docs/network.md), as on separate machines.
 *
 * Two labs on one machine keep apart because each agent owns only what lies in its own cluster
 * CIDR (routes, the masquerade chain) and its own VNI's device; the lab gives each cluster its own
 * VNI (labVxlanVni). The names below are the agent's (route-plan.ts): ROUTE_PROTO, MASQ_TABLE,
 * masqueradeChain, vxlanDeviceName; the CLI does not depend on the agent package, so they are
 * repeated here as PROXY_TABLE is in proxy.ts.
 *
 *   labUp / labAddNode ─▶ agent config podNetwork.vxlanVNI = labVxlanVni(cluster CIDR)
 *   labDown (host node) ─▶ removeHostPodNetwork: routes into the cluster CIDR, nodelet.<vni>, masq chain
 */
import { spawnSync } from 'node:child_process';
import { formatIpv4, parseIpv4Cidr } from '@nodelet/base';
import { inCidr, ip } from './node-network.js';

/** The agent's route protocol number (agent ROUTE_PROTO). */
const AGENT_ROUTE_PROTO = '150';
/** The agent's masquerade table (agent MASQ_TABLE). */
const MASQ_TABLE = 'nodelet-pod-network';

/**
 * The VNI a lab's agents use: the cluster CIDR's second and third octets (10.229.0.0/16 → 58624),
 * so two labs with different cluster CIDRs use different VXLAN devices on a machine they share.
 */
export function labVxlanVni(clusterCidr: string): number {
  return ((parseIpv4Cidr(clusterCidr).base >>> 8) & 0xffff) || 1;
}

/**
 * Deletes what a host node's agent keeps after it stops (the agent leaves its network in place so
 * pods keep talking across a restart): its routes into `clusterCidr`, the VXLAN device of the
 * lab's VNI, and the masquerade chain of `clusterCidr` (the table too once it holds no other
 * chain). Another cluster's routes, device and chain stay. Returns problems, never throws.
 */
export async function removeHostPodNetwork(clusterCidr: string): Promise<string[]> {
  const problems: string[] = [];
  const { base, prefix } = parseIpv4Cidr(clusterCidr);
  try {
    const routes = JSON.parse((await ip(['-json', '-4', 'route', 'show', 'proto', AGENT_ROUTE_PROTO])) || '[]') as Array<{ dst: string }>;
    for (const r of routes) {
      const [net, bits = '32'] = r.dst.split('/');
      if (!net || Number(bits) < prefix || !inCidr(net, clusterCidr)) continue;
      await ip(['route', 'delete', r.dst, 'proto', AGENT_ROUTE_PROTO]).catch((e: Error) => problems.push(`route ${r.dst}: ${e.message}`));
    }
  } catch (err) {
    problems.push(`routes: ${(err as Error).message}`);
  }
  const device = `nodelet.${labVxlanVni(clusterCidr)}`;
  if (spawnSync('ip', ['link', 'show', 'dev', device], { stdio: 'ignore' }).status === 0) {
    await ip(['link', 'delete', device]).catch((e: Error) => problems.push(`device ${device}: ${e.message}`));
  }
  const chain = `masq-${formatIpv4(base).replaceAll('.', '-')}-${prefix}`;
  if (spawnSync('nft', ['list', 'chain', 'ip', MASQ_TABLE, chain], { stdio: 'ignore' }).status === 0) {
    const del = spawnSync('nft', ['delete', 'chain', 'ip', MASQ_TABLE, chain], { encoding: 'utf8' });
    if (del.status !== 0) problems.push(`nft delete chain ip ${MASQ_TABLE} ${chain}: ${del.stderr.trim()}`);
    const left = spawnSync('nft', ['-j', 'list', 'table', 'ip', MASQ_TABLE], { encoding: 'utf8' });
    const chains = left.status === 0 ? (JSON.parse(left.stdout) as { nftables: Array<Record<string, unknown>> }).nftables.filter((o) => o.chain).length : -1;
    if (chains === 0) spawnSync('nft', ['delete', 'table', 'ip', MASQ_TABLE], { stdio: 'ignore' });
  }
  return problems;
}
