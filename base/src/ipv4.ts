/**
 * IPv4 address arithmetic, the one copy every package uses: an address is its 32-bit value as a
 * plain non-negative number (no signed bit tricks), a CIDR its masked network value and prefix.
 * IPv6 is out of scope here; callers that accept it check `isIPv6` first.
 */
import { AgentError } from './errors.js';

const OCTET = /^\d{1,3}$/;

/** The value of dotted-quad `s`, or undefined when it is not exactly four decimal octets 0..255. */
export function tryParseIpv4(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !OCTET.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

/** The value of dotted-quad `s`; ERR_INVALID_ARGUMENT naming it when it is not one. */
export function parseIpv4(s: string): number {
  const n = tryParseIpv4(s);
  if (n === undefined) throw new AgentError('ERR_INVALID_ARGUMENT', `"${s}" is not an IPv4 address`);
  return n;
}

/** The dotted quad of a value 0..2³²−1. */
export function formatIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** An IPv4 CIDR: `base` is the network's value (host bits cleared), `prefix` 0..32. */
export interface Ipv4Cidr {
  base: number;
  prefix: number;
}

/** Parses `a.b.c.d/n` (host bits allowed and cleared); undefined when it is not one. */
export function tryParseIpv4Cidr(cidr: string): Ipv4Cidr | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0) return undefined;
  const addr = tryParseIpv4(cidr.slice(0, slash));
  const bits = cidr.slice(slash + 1);
  if (addr === undefined || !/^\d{1,2}$/.test(bits) || Number(bits) > 32) return undefined;
  const size = 2 ** (32 - Number(bits));
  return { base: Math.floor(addr / size) * size, prefix: Number(bits) };
}

/** Parses `a.b.c.d/n` (host bits cleared); ERR_INVALID_ARGUMENT naming it when it is not one. */
export function parseIpv4Cidr(cidr: string): Ipv4Cidr {
  const c = tryParseIpv4Cidr(cidr);
  if (!c) throw new AgentError('ERR_INVALID_ARGUMENT', `"${cidr}" is not an IPv4 CIDR`);
  return c;
}

/** Whether `ip` is an IPv4 address inside `cidr` (a bare address counts as its /32); false when either is not IPv4. */
export function inIpv4Cidr(ip: string, cidr: string): boolean {
  const n = tryParseIpv4(ip);
  const c = tryParseIpv4Cidr(cidr.includes('/') ? cidr : `${cidr}/32`);
  if (n === undefined || !c) return false;
  const size = 2 ** (32 - c.prefix);
  return Math.floor(n / size) * size === c.base;
}
