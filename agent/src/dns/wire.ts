/**
 * DNS messages in and out, on top of the `dns-packet` codec: checking a query before anything
 * looks at it, and encoding a reply within the transport's size (RFC 1035 §4.2.1: 512 bytes over
 * UDP unless the client's EDNS0 OPT offers more, RFC 6891), truncating with the TC bit so the
 * client asks again over TCP.
 *
 * dns-packet does not compress names, so replies are somewhat larger than a name-compressing
 * server's; the size checks are on the bytes actually sent.
 */
import dnsPacket, { type Answer, type DecodedPacket, type Packet, type Question } from 'dns-packet';

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
export type RcodeName = keyof typeof RCODE;
/** BADVERS (16) does not fit the header's 4 bits: its upper bits go into the OPT record. */
const BADVERS = 16;
const FLAG_AA = 1 << 10;
const FLAG_TC = 1 << 9;
const FLAG_RD = 1 << 8;
const FLAG_RA = 1 << 7;
const FLAG_CD = 1 << 4;
const DNSSEC_OK = 1 << 15;
export const MIN_UDP_SIZE = 512;
/** The largest UDP reply sent, whatever a client offers (larger ones go over TCP). */
export const MAX_UDP_SIZE = 4096;

export interface Edns {
  udpSize: number;
  version: number;
  dnssecOk: boolean;
}

export interface Query {
  id: number;
  flags: number;
  question: Question;
  edns?: Edns;
  /** The message as received. */
  raw: Buffer;
}

export type Checked =
  | { ok: true; query: Query }
  /** Answer with `rcode` (FORMERR, NOTIMP) or BADVERS; or drop when there is no id to answer. */
  | { ok: false; reply?: Buffer };

const nameCodec = (dnsPacket as unknown as { name: { encode(n: string): Buffer } }).name;

/**
 * Decodes and checks a query. Malformed input is FORMERR when the header can be read (so the
 * client stops waiting), dropped otherwise; responses (QR set) are always dropped.
 */
export function checkQuery(buf: Buffer): Checked {
  if (buf.length < 12) return { ok: false };
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000) return { ok: false };
  const fail = (rcode: RcodeName, question?: Question): Checked => ({ ok: false, reply: encodeError(id, flags, rcode, question) });
  let msg: DecodedPacket;
  try {
    msg = dnsPacket.decode(buf);
  } catch {
    return fail('FORMERR');
  }
  if (((flags >> 11) & 0xf) !== 0) return fail('NOTIMP');
  const questions = msg.questions ?? [];
  if (questions.length !== 1) return fail('FORMERR');
  const question = questions[0]!;
  // A name that does not survive decode → encode (a label holding a dot or non-UTF-8 bytes) could
  // be confused with another name in the cache: refuse it.
  let encoded: Buffer;
  try {
    encoded = nameCodec.encode(question.name);
  } catch {
    return fail('FORMERR');
  }
  if (!buf.subarray(12, 12 + encoded.length).equals(encoded)) return fail('FORMERR');
  const opts = (msg.additionals ?? []).filter((a) => a.type === 'OPT');
  if (opts.length > 1) return fail('FORMERR', question);
  let edns: Edns | undefined;
  const opt = opts[0] as dnsPacket.OptAnswer | undefined;
  if (opt) {
    edns = { udpSize: opt.udpPayloadSize, version: opt.ednsVersion, dnssecOk: (opt.flags & DNSSEC_OK) !== 0 };
    if (edns.version !== 0) return { ok: false, reply: encodeReply({ id, flags, question, edns }, { rcode: BADVERS, answers: [], authorities: [], additionals: [] }, 65535).bytes };
  }
  return { ok: true, query: { id, flags, question, edns, raw: buf } };
}

function encodeError(id: number, reqFlags: number, rcode: RcodeName, question?: Question): Buffer {
  return dnsPacket.encode({ type: 'response', id, flags: (reqFlags & FLAG_RD) | RCODE[rcode], questions: question ? [question] : [], answers: [], authorities: [], additionals: [] });
}

/** The UDP size a reply to `q` may have. */
export function udpLimit(q: Pick<Query, 'edns'>): number {
  return Math.min(MAX_UDP_SIZE, Math.max(MIN_UDP_SIZE, q.edns?.udpSize ?? MIN_UDP_SIZE));
}

export interface ReplyBody {
  /** A header rcode, or BADVERS (16). */
  rcode: number;
  authoritative?: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

/**
 * Encodes the reply to `q` within `limit` bytes. When it does not fit, the authority and
 * additional sections go, then answers from the end, and TC is set (miekg/dns Truncate does the
 * same). RD and CD are copied from the query; RA is set (the resolver recurses through its
 * upstreams). An OPT is added when the query had one.
 */
export function encodeReply(q: Pick<Query, 'id' | 'flags' | 'question' | 'edns'>, body: ReplyBody, limit: number): { bytes: Buffer; truncated: boolean } {
  const additionals = [...body.additionals];
  if (q.edns) {
    additionals.push({
      type: 'OPT',
      name: '.',
      udpPayloadSize: Math.max(MIN_UDP_SIZE, Math.min(MAX_UDP_SIZE, q.edns.udpSize)),
      extendedRcode: body.rcode >> 4,
      ednsVersion: 0,
      flags: q.edns.dnssecOk ? DNSSEC_OK : 0,
      flag_do: q.edns.dnssecOk,
      options: [],
    });
  }
  const flags = (q.flags & (FLAG_RD | FLAG_CD)) | FLAG_RA | (body.authoritative ? FLAG_AA : 0) | (body.rcode & 0xf);
  const packet: Packet = { type: 'response', id: q.id, flags, questions: [q.question], answers: body.answers, authorities: body.authorities, additionals };
  if (dnsPacket.encodingLength(packet) <= limit) return { bytes: dnsPacket.encode(packet), truncated: false };
  const opt = additionals.filter((a) => a.type === 'OPT');
  const cut: Packet = { ...packet, flags: flags | FLAG_TC, authorities: [], additionals: opt, answers: [...body.answers] };
  while (cut.answers!.length > 0 && dnsPacket.encodingLength(cut) > limit) cut.answers!.pop();
  return { bytes: dnsPacket.encode(cut), truncated: true };
}

/** The header rcode of a raw message. */
export function rcodeOf(buf: Buffer): number {
  return buf.length >= 4 ? buf.readUInt16BE(2) & 0xf : RCODE.SERVFAIL;
}

/** True when the raw message has TC set. */
export function isTruncated(buf: Buffer): boolean {
  return buf.length >= 4 && (buf.readUInt16BE(2) & FLAG_TC) !== 0;
}

/** A copy of `buf` with `id` as its message ID. */
export function withId(buf: Buffer, id: number): Buffer {
  const out = Buffer.from(buf);
  out.writeUInt16BE(id, 0);
  return out;
}

/** A recursive query for `name`/`type` (the ExternalName chase), with EDNS so answers need not fit 512 bytes. */
export function encodeQuery(id: number, name: string, type: Question['type']): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: FLAG_RD,
    questions: [{ name, type, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: MAX_UDP_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
  });
}

export { dnsPacket };
