import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { ResponseCache } from './cache.js';

const a = (ttl: number, ip = '192.0.2.1'): Answer => ({ type: 'A', name: 'www.example.org', ttl, class: 'IN', data: ip });
const soa = (ttl: number, minimum: number): Answer => ({ type: 'SOA', name: 'example.org', ttl, class: 'IN', data: { mname: 'ns', rname: 'h', serial: 1, refresh: 1, retry: 1, expire: 1, minimum } });
const msg = (rcode: number, answers: Answer[], authorities: Answer[] = [], tc = false): DecodedPacket =>
  dnsPacket.decode(dnsPacket.encode({ type: 'response', id: 1, flags: rcode | (tc ? dnsPacket.TRUNCATED_RESPONSE : 0), questions: [{ name: 'www.example.org', type: 'A' }], answers, authorities }));

describe('response cache', () => {
  it('keeps an answer for its smallest TTL (capped) and serves its remaining life as the TTL', () => {
    let now = 0;
    const c = new ResponseCache({ maxTtlS: 30, now: () => now });
    assert.equal(c.set('k', msg(0, [a(20), a(60, '192.0.2.2')])), true);
    now = 5_500;
    const hit = c.get('k')!;
    assert.deepEqual(hit.answers.map((r) => 'ttl' in r && r.ttl), [14, 14]);
    now = 20_000;
    assert.equal(c.get('k'), undefined);
    c.set('k', msg(0, [a(300)]));
    now = 49_000;
    assert.ok(c.get('k'));
    now = 50_000;
    assert.equal(c.get('k'), undefined, 'capped at maxTtlS');
  });

  it('negative answers live for the SOA negative TTL; none without a SOA; SERVFAIL, TC and TTL 0 are not cached', () => {
    let now = 0;
    const c = new ResponseCache({ maxTtlS: 30, now: () => now });
    assert.equal(c.set('nx', msg(3, [], [soa(60, 10)])), true);
    assert.equal(c.get('nx')!.rcode, 3);
    assert.deepEqual(c.counts(), { success: 0, denial: 1 });
    now = 10_000;
    assert.equal(c.get('nx'), undefined);
    assert.equal(c.set('nx2', msg(3, [])), false);
    assert.equal(c.set('nodata', msg(0, [], [soa(4, 60)])), true);
    assert.equal(c.set('sf', msg(2, [])), false);
    assert.equal(c.set('tc', msg(0, [a(30)], [], true)), false);
    assert.equal(c.set('zero', msg(0, [a(0)])), false);
  });

  it('holds at most `capacity` entries, dropping the least recently used', () => {
    const c = new ResponseCache({ capacity: 2, now: () => 0 });
    c.set('a', msg(0, [a(30)]));
    c.set('b', msg(0, [a(30)]));
    c.get('a');
    c.set('c', msg(0, [a(30)]));
    assert.equal(c.size, 2);
    assert.ok(c.get('a'));
    assert.equal(c.get('b'), undefined);
  });

  it('keys are case-insensitive and tell DO/CD apart', () => {
    assert.equal(ResponseCache.key('WWW.Example.org.', 'A', 'IN', false, false), ResponseCache.key('www.example.org', 'A', 'IN', false, false));
    assert.notEqual(ResponseCache.key('x', 'A', 'IN', true, false), ResponseCache.key('x', 'A', 'IN', false, false));
  });
});
