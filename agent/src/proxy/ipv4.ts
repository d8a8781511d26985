/** IPv4 helpers for the proxy (the table is IPv4-only; see docs/services.md). */
import { isIPv4 } from 'node:net';

function toInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

/** True when `ip` is an IPv4 address inside `cidr` (`a.b.c.d/n`). */
export function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bitsS = '32'] = cidr.split('/');
  if (!isIPv4(ip) || !isIPv4(base)) return false;
  const bits = Number(bitsS);
  if (bits === 0) return true;
  const size = 2 ** (32 - bits);
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}

export function inAnyCidr(ip: string, cidrs: readonly string[]): boolean {
  return cidrs.some((c) => inCidr(ip, c));
}
