/** IPv4 helpers for the proxy (the table is IPv4-only; see docs/services.md). */
import { inIpv4Cidr } from '@nodelet/base';

/** True when `ip` is an IPv4 address inside `cidr` (`a.b.c.d/n`; a bare address is its /32). */
export const inCidr = inIpv4Cidr;

/** True when `ip` is inside one of `cidrs`. */
export function inAnyCidr(ip: string, cidrs: readonly string[]): boolean {
  return cidrs.some((c) => inCidr(ip, c));
}
