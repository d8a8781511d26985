/**
 * Pod CIDR allocation (upstream node IPAM "RangeAllocator"): the cluster CIDR (default
 * 10.244.0.0/16) is cut into /24 blocks; each node gets the lowest free block in spec.podCIDR.
 * IPv4 only. Not thread-safe: one controller owns it.
 */
export const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';
export const DEFAULT_NODE_MASK = 24;

function ipToInt(ip: string): number {
  const parts = ip.split('.').map((p) => Number(p));
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new RangeError(`"${ip}" is not an IPv4 address`);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export function parseCidr(cidr: string): { base: number; bits: number } {
  const [ip, bitsStr] = cidr.split('/');
  const bits = Number(bitsStr);
  if (!ip || !Number.isInteger(bits) || bits < 0 || bits > 32) throw new RangeError(`"${cidr}" is not an IPv4 CIDR`);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (ipToInt(ip) & mask) >>> 0, bits };
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
    return `${intToIp((this.#base + idx * 2 ** (32 - this.#nodeBits)) >>> 0)}/${this.#nodeBits}`;
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
