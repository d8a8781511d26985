/**
 * One DNS query in, one reply out (or nothing, for input that is not a query):
 *
 *   check ──malformed──▶ FORMERR / NOTIMP / BADVERS / drop
 *     │
 *     ├─ name in the cluster zone ──▶ records.ts (authoritative; ExternalName targets chased upstream)
 *     ├─ PTR of a cluster address ──▶ records.ts
 *     └─ anything else ──▶ cache ──miss──▶ forwarder ──▶ upstream reply (cached when cacheable)
 *
 * Cluster-zone names are never forwarded, whatever the view holds. Address records of a local
 * answer are shuffled (kubeadm's Corefile has `loadbalance`). Never throws: an unexpected failure
 * is logged and answered SERVFAIL.
 */
import { describeError, hasCode, type Logger } from '@nodelet/base';
import type { Answer, Question } from 'dns-packet';
import type { ClusterView } from './cluster-index.js';
import { ResponseCache } from './cache.js';
import type { Forwarder } from './forwarder.js';
import type { DnsMetrics } from './metrics.js';
import { inZone, isReverseName, normalizeName } from './names.js';
import { answerReverseQuestion, answerZoneQuestion, type LocalAnswer, type ZoneOptions } from './records.js';
import { RCODE, checkQuery, dnsPacket, encodeQuery, encodeReply, isTruncated, rcodeOf, udpLimit, type Query, type ReplyBody } from './wire.js';

export interface DnsHandlerOptions {
  view: ClusterView;
  zone: ZoneOptions;
  forwarder: Forwarder;
  cache: ResponseCache;
  metrics?: DnsMetrics;
  /** The `server` metric label. */
  server: () => string;
  log: Logger;
  random?: () => number;
}

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const TCP_LIMIT = 65535;

export class DnsHandler {
  readonly #o: DnsHandlerOptions;
  readonly #random: () => number;

  constructor(o: DnsHandlerOptions) {
    this.#o = o;
    this.#random = o.random ?? Math.random;
  }

  /** The reply to `buf` received over `proto`, or undefined when nothing should be sent. */
  async handle(buf: Buffer, proto: 'udp' | 'tcp', family: 4 | 6, signal?: AbortSignal): Promise<Buffer | undefined> {
    const started = performance.now();
    const server = this.#o.server();
    const checked = checkQuery(buf);
    if (!checked.ok) {
      this.#o.metrics?.malformed.inc({ server, proto });
      return checked.reply;
    }
    const q = checked.query;
    const limit = proto === 'udp' ? udpLimit(q) : TCP_LIMIT;
    const name = normalizeName(q.question.name);
    const type = q.question.type;
    let zone = '.';
    let bytes: Buffer;
    try {
      if (inZone(name, this.#o.zone.zone)) {
        zone = `${this.#o.zone.zone}.`;
        bytes = await this.#local(q, name, limit, signal);
      } else {
        const reverse = isReverseName(name) && (q.question.class ?? 'IN') === 'IN' ? answerReverseQuestion(this.#o.view, q.question.name, name, type, this.#o.zone) : undefined;
        if (reverse) {
          zone = name.endsWith('.ip6.arpa') ? 'ip6.arpa.' : 'in-addr.arpa.';
          bytes = encodeReply(q, this.#body(reverse), limit).bytes;
        } else {
          bytes = await this.#forward(q, name, proto, limit, signal);
        }
      }
    } catch (err) {
      this.#o.log.error({ name, type, err: describeError(err) }, 'DNS query failed');
      bytes = encodeReply(q, { rcode: RCODE.SERVFAIL, answers: [], authorities: [], additionals: [] }, limit).bytes;
    }
    const m = this.#o.metrics;
    m?.requests.inc({ server, zone, proto, family: String(family), type });
    m?.responses.inc({ server, zone, rcode: RCODE_NAMES[rcodeOf(bytes)] ?? String(rcodeOf(bytes)) });
    m?.duration.observe({ server, zone, type }, (performance.now() - started) / 1000);
    return bytes;
  }

  #body(a: LocalAnswer): ReplyBody {
    return { rcode: RCODE[a.rcode], authoritative: a.rcode !== 'SERVFAIL', answers: a.answers, authorities: a.authorities, additionals: a.additionals };
  }

  async #local(q: Query, name: string, limit: number, signal?: AbortSignal): Promise<Buffer> {
    if ((q.question.class ?? 'IN') !== 'IN') return encodeReply(q, { rcode: RCODE.REFUSED, answers: [], authorities: [], additionals: [] }, limit).bytes;
    const a = answerZoneQuestion(this.#o.view, q.question.name, name, q.question.type, this.#o.zone);
    if (a.chase) {
      const found = await this.#resolveExternal(a.chase.target, a.chase.type, signal);
      if (found) {
        a.answers = [a.chase.cname, ...found];
        a.authorities = [];
      }
    }
    if (a.answers.every((r) => r.type === 'A' || r.type === 'AAAA')) this.#shuffle(a.answers);
    return encodeReply(q, this.#body(a), limit).bytes;
  }

  /** An ExternalName target's records, from the cache or upstream; undefined when that failed. */
  async #resolveExternal(target: string, type: 'A' | 'AAAA', signal?: AbortSignal): Promise<Answer[] | undefined> {
    const key = ResponseCache.key(target, type, 'IN', false, false);
    const hit = this.#o.cache.get(key);
    if (hit) return hit.answers;
    try {
      const query = encodeQuery(0, target, type);
      let raw = await this.#o.forwarder.exchange(query, 'udp', signal);
      if (isTruncated(raw)) raw = await this.#o.forwarder.exchange(query, 'tcp', signal);
      const msg = dnsPacket.decode(raw);
      this.#o.cache.set(key, msg);
      return msg.answers ?? [];
    } catch (err) {
      this.#o.log.debug({ target, err: describeError(err) }, 'ExternalName target did not resolve');
      return undefined;
    }
  }

  async #forward(q: Query, name: string, proto: 'udp' | 'tcp', limit: number, signal?: AbortSignal): Promise<Buffer> {
    const server = this.#o.server();
    const question: Question = q.question;
    const key = ResponseCache.key(name, question.type, question.class ?? 'IN', !!q.edns?.dnssecOk, (q.flags & (1 << 4)) !== 0);
    const hit = this.#o.cache.get(key);
    if (hit) {
      this.#o.metrics?.cacheHits.inc({ server, type: hit.rcode === 0 && hit.answers.length ? 'success' : 'denial' });
      return encodeReply(q, hit, limit).bytes;
    }
    this.#o.metrics?.cacheMisses.inc({ server });
    let raw: Buffer;
    try {
      raw = await this.#o.forwarder.exchange(q.raw, proto, signal);
    } catch (err) {
      const rcode = hasCode(err, 'ERR_RESOURCE_EXHAUSTED') ? RCODE.REFUSED : RCODE.SERVFAIL;
      this.#o.log.debug({ name, err: describeError(err) }, 'Forwarding failed');
      return encodeReply(q, { rcode, answers: [], authorities: [], additionals: [] }, limit).bytes;
    }
    let decoded;
    try {
      decoded = dnsPacket.decode(raw);
    } catch {
      decoded = undefined;
    }
    if (decoded && !isTruncated(raw)) this.#o.cache.set(key, decoded);
    if (raw.length <= limit) return raw;
    // An upstream that ignored the client's size: cut it down ourselves.
    if (!decoded) return encodeReply(q, { rcode: RCODE.SERVFAIL, answers: [], authorities: [], additionals: [] }, limit).bytes;
    return encodeReply(q, { rcode: rcodeOf(raw), answers: decoded.answers ?? [], authorities: [], additionals: [] }, limit).bytes;
  }

  #shuffle(rs: Answer[]): void {
    for (let i = rs.length - 1; i > 0; i--) {
      const j = Math.floor(this.#random() * (i + 1));
      [rs[i], rs[j]] = [rs[j]!, rs[i]!];
    }
  }
}
