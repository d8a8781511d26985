/**
 * The hollow runtime's fake pod network: hands out IPv4 addresses from the node's pod CIDR (the one
 * the server's IPAM controller put on the Node), as host-local IPAM would: the network and
 * broadcast addresses and the gateway (.1) are never given, a released address may be reused.
 * Nothing is configured on the host. Synchronous; owned by one FakeCri (its pod network).
 */
import { AgentError, formatIpv4, parseIpv4, tryParseIpv4Cidr } from '@nodelet/base';

export class PodIpam {
  #base = 0;
  #size = 0;
  #cidr?: string;
  readonly #used = new Set<number>();
  #next = 2;

  /** The CIDR addresses come from; undefined until the Node has one. */
  get cidr(): string | undefined {
    return this.#cidr;
  }

  /** Sets the range (an IPv4 CIDR of /8 to /30). A changed CIDR keeps the addresses already given. */
  setCidr(cidr: string): void {
    const c = tryParseIpv4Cidr(cidr);
    if (!c || c.prefix < 8 || c.prefix > 30) throw new AgentError('ERR_INVALID_ARGUMENT', `pod CIDR "${cidr}" must be an IPv4 /8 to /30`);
    this.#base = c.base;
    this.#size = 2 ** (32 - c.prefix);
    this.#cidr = cidr;
    this.#next = 2;
  }

  /** The next free address; ERR_NETWORK_NOT_READY without a CIDR, ERR_RESOURCE_EXHAUSTED when all are given. */
  allocate(): string {
    if (!this.#cidr) throw new AgentError('ERR_NETWORK_NOT_READY', 'the node has no pod CIDR yet');
    const usable = this.#size - 3; // network, gateway, broadcast
    for (let i = 0; i < usable; i++) {
      const offset = 2 + ((this.#next - 2 + i) % usable);
      const n = this.#base + offset;
      if (!this.#used.has(n)) {
        this.#used.add(n);
        this.#next = offset + 1;
        return formatIpv4(n);
      }
    }
    throw new AgentError('ERR_RESOURCE_EXHAUSTED', `no free address left in pod CIDR "${this.#cidr}"`);
  }

  /** Returns an address; unknown ones are ignored (release is idempotent, as CNI DEL is). */
  release(ip: string): void {
    if (ip) this.#used.delete(parseIpv4(ip));
  }

  get inUse(): number {
    return this.#used.size;
  }
}
