import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Service } from '@nodelet/api';
import { serviceEnvVars } from './service-env.js';

const svc = (ns: string, name: string, clusterIP: string, ports: Array<{ name?: string; port: number; protocol?: 'TCP' | 'UDP' }>): Service =>
  ({ metadata: { name, namespace: ns }, spec: { clusterIP, ports } }) as Service;

test('service variables: the master service always, the namespace\'s services with enableServiceLinks, Docker-link style', () => {
  const master = svc('default', 'kubernetes', '10.96.0.1', [{ name: 'https', port: 443 }]);
  const web = svc('team', 'my-web', '10.96.0.20', [{ name: 'http', port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }]);
  const headless = svc('team', 'db', 'None', [{ port: 5432 }]);
  const env = serviceEnvVars({ namespace: 'team', enableServiceLinks: true, services: [web, headless], master });
  assert.equal(env.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
  assert.equal(env.get('KUBERNETES_SERVICE_PORT'), '443');
  assert.equal(env.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
  assert.equal(env.get('KUBERNETES_PORT'), 'tcp://10.96.0.1:443');
  assert.equal(env.get('KUBERNETES_PORT_443_TCP_ADDR'), '10.96.0.1');
  assert.equal(env.get('MY_WEB_SERVICE_HOST'), '10.96.0.20');
  assert.equal(env.get('MY_WEB_SERVICE_PORT_DNS'), '53');
  assert.equal(env.get('MY_WEB_PORT_53_UDP'), 'udp://10.96.0.20:53');
  assert.equal(env.get('MY_WEB_PORT_53_UDP_PROTO'), 'udp');
  assert.equal(env.has('DB_SERVICE_HOST'), false, 'headless services get none');
  const off = serviceEnvVars({ namespace: 'team', enableServiceLinks: false, services: [web], master });
  assert.deepEqual([...off.keys()].filter((k) => !k.startsWith('KUBERNETES_')), []);
  assert.ok(off.has('KUBERNETES_SERVICE_HOST'));
});
