import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildModel, categorize } from './model.js';
import { service, slice } from './testing/fixtures.js';

const base = { nodeName: 'n1', sctp: true };

test('one model per port with a ClusterIP; ExternalName, headless and IPv6 services get none', () => {
  const m = buildModel({
    ...base,
    services: [
      service('web', '10.96.0.5', { ports: [{ port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }),
      service('ext', '', { type: 'ExternalName', externalName: 'example.com', clusterIP: undefined, clusterIPs: undefined }),
      service('headless', 'None'),
      service('v6', 'fd00::5', { clusterIPs: ['fd00::5'] }),
    ],
    slices: [],
  });
  assert.deepEqual(m.map((p) => `${p.name}:${p.portName}/${p.protocol}`), ['web:/tcp', 'web:dns/udp']);
});

test('endpoints come from the slices labelled with the service, matched by port name and protocol, deduplicated', () => {
  const m = buildModel({
    ...base,
    services: [service('web', '10.96.0.5', { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] })],
    slices: [
      slice('web', [{ ip: '10.244.0.12' }, { ip: '10.244.0.11' }], [{ name: 'http', port: 8080, protocol: 'TCP' }], 'default', 'web-a'),
      slice('web', [{ ip: '10.244.0.11' }], [{ name: 'http', port: 8080, protocol: 'TCP' }], 'default', 'web-b'),
      slice('web', [{ ip: '10.244.0.13' }], [{ name: 'other', port: 9090, protocol: 'TCP' }], 'default', 'web-c'),
      slice('web', [{ ip: '10.244.0.14' }], [{ name: 'http', port: 8080, protocol: 'TCP' }], 'other-ns', 'web-d'),
    ],
  });
  assert.deepEqual(m[0]!.endpoints.map((e) => `${e.ip}:${e.port}`), ['10.244.0.11:8080', '10.244.0.12:8080']);
});

test('only ready endpoints serve; serving+terminating ones only when none is ready', () => {
  const mk = (eps: Parameters<typeof slice>[1]) => categorize(buildModel({ ...base, services: [service('web', '10.96.0.5')], slices: [slice('web', eps)] })[0]!, 'n1');
  const some = mk([{ ip: '10.244.0.11' }, { ip: '10.244.0.12', ready: false, serving: true, terminating: true }, { ip: '10.244.0.13', ready: false }]);
  assert.deepEqual(some.cluster.map((e) => e.ip), ['10.244.0.11']);
  const draining = mk([{ ip: '10.244.0.12', ready: false, serving: true, terminating: true }, { ip: '10.244.0.13', ready: false, serving: false, terminating: true }]);
  assert.deepEqual(draining.cluster.map((e) => e.ip), ['10.244.0.12']);
  const none = mk([{ ip: '10.244.0.13', ready: false }]);
  assert.equal(none.hasEndpoints, false);
});

test('traffic policies: Local keeps this node’s endpoints', () => {
  const svc = service('web', '10.96.0.5', { type: 'NodePort', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] });
  const [p] = buildModel({ ...base, services: [svc], slices: [slice('web', [{ ip: '10.244.0.11', node: 'n1' }, { ip: '10.244.1.11', node: 'n2' }], [{ port: 80, protocol: 'TCP' }])] });
  const c = categorize(p!, 'n1');
  assert.equal(p!.nodePort, 30080);
  assert.deepEqual(c.local.map((e) => e.ip), ['10.244.0.11']);
  assert.deepEqual(c.cluster.map((e) => e.ip), ['10.244.0.11', '10.244.1.11']);
  assert.equal(c.usesLocalChain, true);
  assert.equal(c.usesClusterChain, true, 'eTP=Local still short-circuits pod and node traffic through the cluster chain');
});

test('ClientIP affinity defaults to 10800 s; SCTP ports are dropped without kernel support', () => {
  const svc = service('web', '10.96.0.5', { sessionAffinity: 'ClientIP', ports: [{ port: 80, protocol: 'TCP' }, { name: 's', port: 90, protocol: 'SCTP' }] });
  const m = buildModel({ ...base, sctp: false, services: [svc], slices: [] });
  assert.equal(m.length, 1);
  assert.equal(m[0]!.affinityTimeoutS, 10800);
  const timed = buildModel({ ...base, services: [service('web', '10.96.0.5', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } })], slices: [] });
  assert.equal(timed[0]!.affinityTimeoutS, 60);
});

test('localDNS sends kube-system/kube-dns port 53 to the node-local resolver and nothing else', () => {
  const dns = service('kube-dns', '10.96.0.10', { ports: [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'metrics', port: 9153, protocol: 'TCP' }] }, 'kube-system');
  const m = buildModel({ ...base, localDNS: { ip: '10.244.0.1', port: 5353 }, services: [dns], slices: [slice('kube-dns', [{ ip: '10.244.0.50' }], [{ name: 'metrics', port: 9153, protocol: 'TCP' }], 'kube-system')] });
  const byPort = Object.fromEntries(m.map((p) => [`${p.port}/${p.protocol}`, p]));
  assert.deepEqual(byPort['53/udp']!.endpoints.map((e) => `${e.ip}:${e.port}`), ['10.244.0.1:5353']);
  assert.deepEqual(byPort['53/tcp']!.endpoints.map((e) => `${e.ip}:${e.port}`), ['10.244.0.1:5353']);
  assert.deepEqual(byPort['9153/tcp']!.endpoints.map((e) => `${e.ip}:${e.port}`), ['10.244.0.50:9153']);
  const other = buildModel({ ...base, localDNS: { ip: '10.244.0.1', port: 5353 }, services: [service('kube-dns', '10.96.0.11', { ports: [{ port: 53, protocol: 'UDP' }] })], slices: [] });
  assert.equal(other[0]!.endpoints.length, 0, 'only kube-system/kube-dns is redirected');
});
