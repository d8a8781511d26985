/**
 * Where the server's proxies to agents may connect.
 *
 *   nodes/<n>/proxy   only a globally routable unicast address: never loopback, link-local,
 *                     multicast, unspecified or broadcast (kube-apiserver's proxyutil
 *                     IsProxyableHostname, enforced for every nodes/proxy request since
 *                     CVE-2022-3294); a host name is resolved and every address checked.
 *                     Refused with kube-apiserver's 400 `address not allowed`.
 *   every agent dial  (logs, exec, attach, port-forward too) never this API server's own
 *                     listening port on this machine (nodelet's addition): a node that reports
 *                     127.0.0.1 and the server's port would otherwise have the server talk to
 *                     itself with its agent client certificate.
 *
 * logs/exec/attach/port-forward reach a loopback agent, as upstream's (their connection info is
 * not checked): a one-machine test cluster's agent may listen on 127.0.0.1 only.
 *
 * A name is resolved here and again when dialled, so an answer that changes in between is not
 * caught (upstream's CVE-2020-8562 caveat); node addresses are normally IPs.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { hostAddresses } from '../../pki/pki.js';
import type { ServerContext } from '../context.js';
import { badRequest } from '../status.js';

/** Addresses that are not global unicast (Go's net.IP.IsGlobalUnicast is false for them). */
const NOT_GLOBAL_UNICAST = new BlockList();
NOT_GLOBAL_UNICAST.addSubnet('127.0.0.0', 8, 'ipv4');
NOT_GLOBAL_UNICAST.addSubnet('169.254.0.0', 16, 'ipv4');
NOT_GLOBAL_UNICAST.addSubnet('224.0.0.0', 4, 'ipv4');
NOT_GLOBAL_UNICAST.addAddress('0.0.0.0', 'ipv4');
NOT_GLOBAL_UNICAST.addAddress('255.255.255.255', 'ipv4');
NOT_GLOBAL_UNICAST.addAddress('::', 'ipv6');
NOT_GLOBAL_UNICAST.addAddress('::1', 'ipv6');
NOT_GLOBAL_UNICAST.addSubnet('fe80::', 10, 'ipv6');
NOT_GLOBAL_UNICAST.addSubnet('ff00::', 8, 'ipv6');

/** Whether `ip` is a global unicast address (IPv4-mapped IPv6 is judged as its IPv4 address). */
export function isGlobalUnicast(ip: string): boolean {
  const family = isIP(ip);
  if (!family) return false;
  return !NOT_GLOBAL_UNICAST.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

async function addressesOf(host: string): Promise<string[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) return [bare];
  let found: Array<{ address: string }>;
  try {
    found = await lookup(bare, { all: true });
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  if (!found.length) throw badRequest('No addresses for hostname');
  return found.map((a) => a.address);
}

/** Refuses a nodes/proxy target that is not global unicast (400 `address not allowed`). */
export async function checkNodeProxyTarget(host: string): Promise<void> {
  if (!(await addressesOf(host)).every(isGlobalUnicast)) throw badRequest('address not allowed');
}

/** Refuses any agent dial to this server's own listening port on this machine. */
export async function checkNotSelf(ctx: ServerContext, host: string, port: number): Promise<void> {
  const own = ctx.listeningOn?.();
  if (!own || own.port !== port) return;
  const local = new Set(hostAddresses());
  const wildcard = own.address === '0.0.0.0' || own.address === '::';
  const self = (ip: string): boolean => ip === own.address || (wildcard && (local.has(ip) || !isGlobalUnicast(ip))) || ip.startsWith('127.') || ip === '::1';
  if ((await addressesOf(host)).some(self)) throw badRequest(`address not allowed: ${host}:${port} is this API server`);
}
