import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { Service } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { buildModel } from './model.js';
import { LbAddresses, wantedLbAddresses } from './lb-addresses.js';
import { HealthCheckServers, healthChecks } from './health-check.js';
import type { CommandRunner } from './exec.js';
import { service, slice } from './testing/fixtures.js';

const lb = (name: string, ip: string, ingress: string[], spec: Partial<NonNullable<Service['spec']>> = {}): Service => ({
  ...service(name, ip, { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ...spec }),
  status: { loadBalancer: { ingress: ingress.map((i) => ({ ip: i })) } },
});

test('a node holds an LB address only while it can serve it, and never a Node’s own address', () => {
  const services = [
    lb('cluster', '10.96.0.5', ['192.168.240.1']),
    lb('local-here', '10.96.0.6', ['192.168.240.2'], { externalTrafficPolicy: 'Local' }),
    lb('local-elsewhere', '10.96.0.7', ['192.168.240.3'], { externalTrafficPolicy: 'Local' }),
    lb('no-endpoints', '10.96.0.8', ['192.168.240.4']),
    lb('node-ips', '10.96.0.9', ['192.168.90.1', '192.168.90.2']),
  ];
  const slices = [
    slice('cluster', [{ ip: '10.244.1.5', node: 'n2' }]),
    slice('local-here', [{ ip: '10.244.0.5', node: 'n1' }]),
    slice('local-elsewhere', [{ ip: '10.244.1.6', node: 'n2' }]),
    slice('node-ips', [{ ip: '10.244.1.7', node: 'n2' }]),
  ];
  const ports = buildModel({ services, slices, nodeName: 'n1', sctp: false });
  assert.deepEqual(wantedLbAddresses(ports, 'n1', new Set(['192.168.90.1', '192.168.90.2'])), ['192.168.240.1', '192.168.240.2']);
});

/** A runner answering `ip -json addr show` from `links` and recording every command. */
function fakeIp(links: Array<{ ifname: string; addr_info: Array<{ family: string; local: string; prefixlen: number }> }>): CommandRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async run(argv) {
      calls.push(argv.join(' '));
      return { code: 0, stdout: argv.includes('-json') ? JSON.stringify(links) : '', stderr: '' };
    },
    stream: () => Promise.resolve(0),
  };
}

test('LbAddresses creates the dummy device once needed, adds and removes /32s, and does nothing when nothing is wanted or held', async () => {
  const signal = AbortSignal.timeout(5000);
  const empty = fakeIp([{ ifname: 'eth0', addr_info: [{ family: 'inet', local: '192.168.90.1', prefixlen: 24 }] }]);
  const a = new LbAddresses({ runner: empty, log: noopLogger });
  await a.sync([], signal);
  await a.sync([], signal);
  assert.deepEqual(empty.calls, ['ip -json addr show'], 'read once; no device made for nothing');
  await a.sync(['192.168.240.1'], signal);
  assert.deepEqual(empty.calls.slice(1), ['ip -json addr show', 'ip link add nodelet-lb0 type dummy', 'ip link set nodelet-lb0 up', 'ip addr replace 192.168.240.1/32 dev nodelet-lb0']);

  const held = fakeIp([{ ifname: 'nodelet-lb0', addr_info: [{ family: 'inet', local: '192.168.240.1', prefixlen: 32 }, { family: 'inet', local: '192.168.240.9', prefixlen: 32 }] }]);
  await new LbAddresses({ runner: held, log: noopLogger }).sync(['192.168.240.1', '192.168.240.2'], signal);
  assert.deepEqual(held.calls, ['ip -json addr show', 'ip addr replace 192.168.240.2/32 dev nodelet-lb0', 'ip addr del 192.168.240.9/32 dev nodelet-lb0']);
});

function get(port: number): Promise<{ status: number; body: string; weight: string | undefined }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, weight: res.headers['x-load-balancing-endpoint-weight'] as string | undefined }));
    }).on('error', reject).end();
  });
}

test('health-check node ports: 200 with local endpoints, 503 without, kube-proxy’s JSON; closed when the Service goes', async (t) => {
  const port = 30000 + (process.pid % 2000) + 500;
  const svc = lb('web', '10.96.0.5', ['192.168.240.1'], { externalTrafficPolicy: 'Local', healthCheckNodePort: port });
  const hc = new HealthCheckServers({ bindAddress: '127.0.0.1', log: noopLogger });
  t.after(() => hc.close());
  const entries = (eps: Parameters<typeof slice>[1]) => healthChecks([svc, lb('cluster', '10.96.0.6', [], { healthCheckNodePort: port + 1 })], buildModel({ services: [svc], slices: [slice('web', eps)], nodeName: 'n1', sctp: false }), 'n1');
  const two = entries([{ ip: '10.244.0.5', node: 'n1' }, { ip: '10.244.0.6', node: 'n1' }, { ip: '10.244.1.5', node: 'n2' }]);
  assert.deepEqual([...two.keys()], [port], 'only eTP Local LoadBalancers');
  hc.update(two);
  // listen() completes asynchronously.
  let r = await pollUntil('the health check listening', () => get(port).catch(() => undefined), { timeoutMs: 5000, intervalMs: 20 });
  assert.equal(r.status, 200);
  assert.equal(r.weight, '2');
  assert.deepEqual(JSON.parse(r.body), { service: { namespace: 'default', name: 'web' }, localEndpoints: 2, serviceProxyHealthy: true });
  hc.update(entries([{ ip: '10.244.1.5', node: 'n2' }]));
  r = await get(port);
  assert.equal(r.status, 503);
  assert.equal(JSON.parse(r.body).localEndpoints, 0);
  hc.update(new Map());
  await pollUntil('the listener closed', () => get(port).then(() => undefined, (err: Error) => (/ECONNREFUSED/.test(err.message) ? true : undefined)), { timeoutMs: 5000, intervalMs: 20 });
});
