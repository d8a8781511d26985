/**
 * A bounded cache of upstream answers (the role of CoreDNS's `cache 30` in kubeadm's Corefile).
 *
 * An entry lives for the smallest TTL of its records, capped at `maxTtlS`; a negative answer
 * (NXDOMAIN, or NOERROR without answers) lives for the SOA's negative TTL (min of its TTL and
 * MINIMUM, RFC 2308) and is not cached without a SOA. SERVFAIL, truncated answers and answers
 * with a zero TTL are not cached. Served records carry the entry's remaining life as their TTL.
 * When full, the least recently used entry goes.
 */
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';

export interface CachedAnswer {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

interface Entry extends CachedAnswer {
  expiresAt: number;
  negative: boolean;
}

const ttlOf = (a: Answer): number => ('ttl' in a && typeof a.ttl === 'number' ? a.ttl : 0);

export class ResponseCache {
  readonly #entries = new Map<string, Entry>();
  readonly #capacity: number;
  readonly #maxTtlS: number;
  readonly #now: () => number;

  constructor(o: { capacity?: number; maxTtlS?: number; now?: () => number } = {}) {
    this.#capacity = o.capacity ?? 10_000;
    this.#maxTtlS = o.maxTtlS ?? 30;
    this.#now = o.now ?? Date.now;
  }

  static key(name: string, type: string, klass: string, dnssecOk: boolean, checkingDisabled: boolean): string {
    return `${name.toLowerCase().replace(/\.+$/, '')}|${type}|${klass}|${dnssecOk ? 1 : 0}|${checkingDisabled ? 1 : 0}`;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Counts of live entries, for the entries gauge. */
  counts(): { success: number; denial: number } {
    let success = 0;
    let denial = 0;
    for (const e of this.#entries.values()) if (e.negative) denial++; else success++;
    return { success, denial };
  }

  /** The entry with TTLs lowered by its age, or undefined (missing or expired). */
  get(key: string): CachedAnswer | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    const now = this.#now();
    if (now >= e.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, e);
    // Every record is served with the entry's remaining life (CoreDNS's cache does the same).
    const left = Math.max(1, Math.floor((e.expiresAt - now) / 1000));
    const down = (rs: Answer[]): Answer[] => rs.map((r) => ('ttl' in r ? { ...r, ttl: left } : r));
    return { rcode: e.rcode, answers: down(e.answers), authorities: down(e.authorities), additionals: down(e.additionals) };
  }

  /** Stores a decoded upstream response when it is cacheable; returns whether it was stored. */
  set(key: string, msg: DecodedPacket): boolean {
    const rcode = (msg.flags ?? 0) & 0xf;
    if (msg.flag_tc || (rcode !== 0 && rcode !== 3)) return false;
    const answers = msg.answers ?? [];
    const authorities = msg.authorities ?? [];
    const additionals = (msg.additionals ?? []).filter((a) => a.type !== 'OPT');
    const negative = rcode === 3 || answers.length === 0;
    let ttl: number;
    if (negative) {
      const soa = authorities.find((a) => a.type === 'SOA');
      if (!soa || soa.type !== 'SOA') return false;
      ttl = Math.min(ttlOf(soa), soa.data.minimum ?? 0);
    } else {
      ttl = Math.min(...[...answers, ...authorities, ...additionals].map(ttlOf));
    }
    ttl = Math.min(ttl, this.#maxTtlS);
    if (!(ttl > 0)) return false;
    // Served entries are encoded again: keep only what the codec can write back.
    try {
      dnsPacket.encode({ type: 'response', questions: msg.questions ?? [], answers, authorities, additionals });
    } catch {
      return false;
    }
    const now = this.#now();
    this.#entries.delete(key);
    this.#entries.set(key, { rcode, answers, authorities, additionals, expiresAt: now + ttl * 1000, negative });
    while (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
    return true;
  }
}
