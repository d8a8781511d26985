import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from './errors.js';
import { formatIpv4, inIpv4Cidr, parseIpv4, parseIpv4Cidr, tryParseIpv4, tryParseIpv4Cidr } from './ipv4.js';

test('ipv4: values are unsigned 32-bit numbers, round-tripped by formatIpv4', () => {
  assert.equal(parseIpv4('0.0.0.0'), 0);
  assert.equal(parseIpv4('10.244.1.2'), 10 * 2 ** 24 + 244 * 2 ** 16 + 258);
  assert.equal(parseIpv4('255.255.255.255'), 2 ** 32 - 1);
  for (const s of ['0.0.0.0', '10.96.0.10', '192.168.240.7', '255.255.255.255']) assert.equal(formatIpv4(parseIpv4(s)), s);
  for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '1.2.3.-1', '1.2.3.4 ', '1..3.4', '0x1.2.3.4', '1.2.3.1e1', '::1']) {
    assert.equal(tryParseIpv4(bad), undefined, bad);
    assert.throws(() => parseIpv4(bad), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && (e as Error).message.includes(`"${bad}"`));
  }
});

test('ipv4 CIDR: host bits cleared, prefix 0..32, containment at the edges', () => {
  assert.deepEqual(parseIpv4Cidr('10.0.0.1/24'), { base: parseIpv4('10.0.0.0'), prefix: 24 });
  assert.deepEqual(parseIpv4Cidr('1.2.3.4/0'), { base: 0, prefix: 0 });
  assert.deepEqual(parseIpv4Cidr('1.2.3.4/32'), { base: parseIpv4('1.2.3.4'), prefix: 32 });
  for (const bad of ['10.0.0.0', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/-1', 'nope/8', '10.0.0.0/8/8']) {
    assert.equal(tryParseIpv4Cidr(bad), undefined, bad);
    assert.throws(() => parseIpv4Cidr(bad), /is not an IPv4 CIDR/);
  }
  assert.equal(inIpv4Cidr('10.0.0.0', '10.0.0.0/24'), true);
  assert.equal(inIpv4Cidr('10.0.0.255', '10.0.0.0/24'), true);
  assert.equal(inIpv4Cidr('10.0.1.0', '10.0.0.0/24'), false);
  assert.equal(inIpv4Cidr('255.255.255.255', '128.0.0.0/1'), true);
  assert.equal(inIpv4Cidr('127.255.255.255', '128.0.0.0/1'), false);
  assert.equal(inIpv4Cidr('8.8.8.8', '0.0.0.0/0'), true);
  assert.equal(inIpv4Cidr('10.0.0.5', '10.0.0.5/32'), true);
  assert.equal(inIpv4Cidr('10.0.0.6', '10.0.0.5/32'), false);
  assert.equal(inIpv4Cidr('fd00::1', '0.0.0.0/0'), false, 'not IPv4: never inside');
  assert.equal(inIpv4Cidr('10.0.0.1', 'junk'), false);
  assert.equal(inIpv4Cidr('10.0.0.1', '10.0.0.1'), true, 'a bare address is its /32');
  assert.equal(inIpv4Cidr('10.0.0.2', '10.0.0.1'), false);
});
