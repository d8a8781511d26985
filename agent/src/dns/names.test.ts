import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { endpointLabel, ipKey, parseClusterName, podLabelToIp, reverseNameToIp } from './names.js';

describe('DNS names', () => {
  it('parses cluster names like the kubernetes plugin', () => {
    const p = (n: string) => parseClusterName(n, 'cluster.local');
    assert.deepEqual(p('cluster.local'), { kind: 'apex' });
    assert.deepEqual(p('svc.cluster.local'), { kind: 'apex' });
    assert.deepEqual(p('x.cluster.local'), { kind: 'invalid' });
    assert.deepEqual(p('ns.svc.cluster.local'), { kind: 'namespace', scope: 'svc', namespace: 'ns' });
    assert.deepEqual(p('web.ns.svc.cluster.local'), { kind: 'svc', namespace: 'ns', service: 'web' });
    assert.deepEqual(p('web-0.web.ns.svc.cluster.local'), { kind: 'svc', namespace: 'ns', service: 'web', endpoint: 'web-0' });
    assert.deepEqual(p('_http._tcp.web.ns.svc.cluster.local'), { kind: 'svc', namespace: 'ns', service: 'web', port: 'http', protocol: 'tcp' });
    assert.deepEqual(p('a._http._tcp.web.ns.svc.cluster.local'), { kind: 'invalid' });
    assert.deepEqual(p('1-2-3-4.ns.pod.cluster.local'), { kind: 'pod', namespace: 'ns', pod: '1-2-3-4' });
  });

  it('converts addresses', () => {
    assert.equal(reverseNameToIp('4.3.2.1.in-addr.arpa'), '1.2.3.4');
    assert.equal(reverseNameToIp('04.3.2.1.in-addr.arpa'), undefined);
    assert.equal(reverseNameToIp('3.2.1.in-addr.arpa'), undefined);
    assert.equal(reverseNameToIp(`${'0.'.repeat(31)}1.ip6.arpa`), '1000:0000:0000:0000:0000:0000:0000:0000');
    assert.equal(ipKey('fd00::1'), 'fd00:0000:0000:0000:0000:0000:0000:0001');
    assert.equal(ipKey('01.02.03.04'), '1.2.3.4');
    assert.equal(ipKey('::ffff:10.0.0.1'), '0000:0000:0000:0000:0000:ffff:0a00:0001');
    assert.equal(ipKey('nope'), undefined);
    assert.equal(podLabelToIp('10-244-1-5'), '10.244.1.5');
    assert.equal(podLabelToIp('fd00--1'), 'fd00::1');
    assert.equal(podLabelToIp('10-244-1'), undefined);
    assert.equal(endpointLabel('10.244.1.5', undefined), '10-244-1-5');
    assert.equal(endpointLabel('10.244.1.5', 'web-0'), 'web-0');
    assert.equal(endpointLabel('fd00::1', undefined), 'fd00--1');
  });
});
