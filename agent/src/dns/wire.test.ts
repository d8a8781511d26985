// Query checks and reply encoding: malformed input gets FORMERR or nothing, big UDP replies get TC.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket, { type Answer } from 'dns-packet';
import { checkQuery, encodeReply, udpLimit } from './wire.js';

const query = (o: { flags?: number; questions?: number; edns?: { size: number; version?: number }; name?: string } = {}): Buffer =>
  dnsPacket.encode({
    type: 'query',
    id: 7,
    flags: o.flags ?? dnsPacket.RECURSION_DESIRED,
    questions: Array.from({ length: o.questions ?? 1 }, () => ({ name: o.name ?? 'web.default.svc.cluster.local', type: 'A' as const, class: 'IN' as const })),
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns.size, extendedRcode: 0, ednsVersion: o.edns.version ?? 0, flags: 0, flag_do: false, options: [] }] : [],
  });

const replyOf = (c: ReturnType<typeof checkQuery>): ReturnType<typeof dnsPacket.decode> & { rcode?: string } => {
  assert.equal(c.ok, false);
  assert.ok(!c.ok && c.reply, 'a reply');
  return dnsPacket.decode((c as { reply: Buffer }).reply);
};

describe('DNS wire', () => {
  it('accepts a query and reads its EDNS size', () => {
    const c = checkQuery(query({ edns: { size: 1232 } }));
    assert.ok(c.ok);
    assert.equal(c.ok && c.query.question.name, 'web.default.svc.cluster.local');
    assert.equal(c.ok && udpLimit(c.query), 1232);
    const plain = checkQuery(query());
    assert.equal(plain.ok && udpLimit(plain.query), 512);
  });

  it('drops what cannot be answered: short input, responses', () => {
    assert.deepEqual(checkQuery(Buffer.from([1, 2, 3])), { ok: false });
    const response = query();
    response.writeUInt16BE(response.readUInt16BE(2) | 0x8000, 2);
    assert.deepEqual(checkQuery(response), { ok: false });
  });

  it('answers FORMERR for garbage after a readable header, several questions, a mangled name; NOTIMP for other opcodes', () => {
    const garbage = Buffer.concat([Buffer.from([0, 9, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xff, 0xff])]);
    const g = replyOf(checkQuery(garbage));
    assert.equal(g.id, 9);
    assert.equal(g.rcode, 'FORMERR');
    assert.equal(replyOf(checkQuery(query({ questions: 2 }))).rcode, 'FORMERR');
    assert.equal(replyOf(checkQuery(query({ questions: 0 }))).rcode, 'FORMERR');
    // A label that holds a dot would read back as two labels (and share a cache key with that name).
    const header = query().subarray(0, 12);
    const raw = Buffer.concat([header, Buffer.from([5]), Buffer.from('ab.cx'), Buffer.from([0, 0, 1, 0, 1])]);
    assert.equal(replyOf(checkQuery(raw)).rcode, 'FORMERR');
    const fine = Buffer.concat([header, Buffer.from([2]), Buffer.from('ab'), Buffer.from([2]), Buffer.from('cx'), Buffer.from([0, 0, 1, 0, 1])]);
    assert.equal(checkQuery(fine).ok, true, 'the same name with real labels is fine');
    assert.equal(replyOf(checkQuery(query({ flags: 2 << 11 }))).rcode, 'NOTIMP');
  });

  it('answers BADVERS for EDNS versions other than 0', () => {
    const r = replyOf(checkQuery(query({ edns: { size: 1232, version: 1 } })));
    const opt = r.additionals?.find((a) => a.type === 'OPT');
    assert.ok(opt && opt.type === 'OPT' && opt.extendedRcode === 1, 'BADVERS = 16: extended rcode 1, header 0');
    assert.equal(r.rcode, 'NOERROR');
  });

  it('truncates a reply that does not fit with TC set, keeping what fits of the answers', () => {
    const c = checkQuery(query());
    assert.ok(c.ok);
    const answers: Answer[] = Array.from({ length: 40 }, (_, i) => ({ type: 'A', name: 'db.default.svc.cluster.local', ttl: 30, class: 'IN', data: `10.244.0.${i + 1}` }));
    const udp = encodeReply(c.query, { rcode: 0, answers, authorities: [], additionals: [] }, 512);
    assert.equal(udp.truncated, true);
    assert.ok(udp.bytes.length <= 512);
    const d = dnsPacket.decode(udp.bytes);
    assert.equal(d.flag_tc, true);
    assert.ok(d.answers!.length > 0 && d.answers!.length < 40);
    const tcp = encodeReply(c.query, { rcode: 0, answers, authorities: [], additionals: [] }, 65535);
    assert.equal(tcp.truncated, false);
    assert.equal(dnsPacket.decode(tcp.bytes).answers!.length, 40);
  });
});
