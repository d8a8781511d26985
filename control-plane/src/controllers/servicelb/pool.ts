/**
 * The address pool of the service load balancer (`nodelet server --service-lb-pool <CIDR>`):
 * which Service holds which address. Pure bookkeeping, IPv4 only; one controller worker owns it.
 * An address once held stays with its Service (`claim` keeps what the Service's status already
 * shows), so assignments survive a restart of the controller: it re-claims from the statuses first.
 */
import { formatIpv4, tryParseIpv4 } from '@nodelet/base';
import { parseCidr } from '../ipam/cidr-allocator.js';

/** Parses and checks a pool CIDR; throws a RangeError naming the flag's problem. */
export function parsePool(cidr: string): { first: number; last: number } {
  const { base, bits } = parseCidr(cidr);
  const size = 2 ** (32 - bits);
  if (formatIpv4(base) !== cidr.split('/')[0]) throw new RangeError(`"${cidr}" has host bits set; give the network address (${formatIpv4(base)}/${bits})`);
  // A /31 or /32 has no network or broadcast address to leave out (RFC 3021).
  if (bits >= 31) return { first: base, last: base + size - 1 };
  return { first: base + 1, last: base + size - 2 };
}

export class AddressPool {
  readonly #first: number;
  readonly #last: number;
  /** address (int) → holder key */
  readonly #holder = new Map<number, string>();
  /** holder key → address (int) */
  readonly #held = new Map<string, number>();

  constructor(cidr: string) {
    ({ first: this.#first, last: this.#last } = parsePool(cidr));
  }

  /** How many addresses the pool hands out. */
  get size(): number {
    return this.#last - this.#first + 1;
  }

  contains(ip: string): boolean {
    const n = tryParseIpv4(ip);
    return n !== undefined && n >= this.#first && n <= this.#last;
  }

  /** The address `key` holds, if any. */
  heldBy(key: string): string | undefined {
    const n = this.#held.get(key);
    return n === undefined ? undefined : formatIpv4(n);
  }

  /**
   * Gives `key` the address `ip` when it is in the pool and free (or already `key`'s); returns
   * whether it did. Claiming a second address releases the first.
   */
  claim(key: string, ip: string): boolean {
    const n = tryParseIpv4(ip);
    if (n === undefined || n < this.#first || n > this.#last) return false;
    const h = this.#holder.get(n);
    if (h !== undefined && h !== key) return false;
    this.release(key);
    this.#holder.set(n, key);
    this.#held.set(key, n);
    return true;
  }

  /** `key`'s address, assigning the lowest free one when it has none; undefined when the pool is full. */
  assign(key: string): string | undefined {
    const have = this.heldBy(key);
    if (have) return have;
    for (let n = this.#first; n <= this.#last; n++) {
      if (this.#holder.has(n)) continue;
      this.#holder.set(n, key);
      this.#held.set(key, n);
      return formatIpv4(n);
    }
    return undefined;
  }

  /** Frees what `key` holds (nothing when it holds nothing). */
  release(key: string): void {
    const n = this.#held.get(key);
    if (n === undefined) return;
    this.#held.delete(key);
    this.#holder.delete(n);
  }
}
