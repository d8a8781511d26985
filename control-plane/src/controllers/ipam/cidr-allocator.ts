/**
 * Pod CIDR allocation (upstream node IPAM "RangeAllocator"): the cluster CIDR (default
 * 10.244.0.0/16) is cut into /24 blocks; each node gets the lowest free block in spec.podCIDR.
 * IPv4 only. Not thread-safe: one controller owns it.
 */
import { formatIpv4, parseIpv4Cidr } from '@nodelet/base';

export const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';
export const DEFAULT_NODE_MASK = 24;

/** `{ base, bits }` of an IPv4 CIDR (host bits cleared); ERR_INVALID_ARGUMENT when it is not one. */
export function parseCidr(cidr: string): { base: number; bits: number } {
  const { base, prefix } = parseIpv4Cidr(cidr);
  return { base, bits: prefix };
}

export class CidrAllocator {
  readonly #base: number;
  readonly #nodeBits: number;
  readonly #size: number;
  readonly #used = new Set<number>();

  constructor(clusterCidr = DEFAULT_CLUSTER_CIDR, nodeMask = DEFAULT_NODE_MASK) {
    const { base, bits } = parseCidr(clusterCidr);
    if (nodeMask < bits || nodeMask > 30) throw new RangeError(`node mask /${nodeMask} must be between /${bits} and /30 for cluster CIDR ${clusterCidr}`);
    this.#base = base;
    this.#nodeBits = nodeMask;
    this.#size = 2 ** (nodeMask - bits);
  }

  /** The prefix length of each node's CIDR. */
  get maskSize(): number {
    return this.#nodeBits;
  }

  get capacity(): number {
    return this.#size;
  }

  get used(): number {
    return this.#used.size;
  }

  #indexOf(cidr: string): number | undefined {
    const { base, bits } = parseCidr(cidr);
    if (bits !== this.#nodeBits) return undefined;
    const idx = (base - this.#base) / 2 ** (32 - this.#nodeBits);
    return Number.isInteger(idx) && idx >= 0 && idx < this.#size ? idx : undefined;
  }

  #cidrAt(idx: number): string {
    return `${formatIpv4((this.#base + idx * 2 ** (32 - this.#nodeBits)) >>> 0)}/${this.#nodeBits}`;
  }

  /** Marks a CIDR a node already has as used. False if it is outside the cluster CIDR or already used. */
  occupy(cidr: string): boolean {
    const idx = this.#indexOf(cidr);
    if (idx === undefined || this.#used.has(idx)) return false;
    this.#used.add(idx);
    return true;
  }

  /** The lowest free block, now used; undefined when the cluster CIDR is exhausted. */
  allocate(): string | undefined {
    for (let i = 0; i < this.#size; i++) {
      if (!this.#used.has(i)) {
        this.#used.add(i);
        return this.#cidrAt(i);
      }
    }
    return undefined;
  }

  release(cidr: string): void {
    const idx = this.#indexOf(cidr);
    if (idx !== undefined) this.#used.delete(idx);
  }
}
