/**
 * The node-local resolver against a real API server: `nodelet server` in-process (SQLite, its
 * controllers, so EndpointSlices come from the EndpointSlice controller), the resolver on a
 * loopback port with informers under a node's own credential, queried over UDP and TCP with
 * dns-packet, forwarding to the test's own upstream on loopback. Last: the API server stops and
 * the resolver keeps answering. Needs no root and no container runtime.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Answer } from 'dns-packet';
import { Registry } from 'prom-client';
import { noopLogger, pollUntil } from '@nodelet/base';
import { ApiClient, newBootstrapToken, NODES, PODS, SECRETS, SERVICES, type KubeObject, type Pod, type ResourceType, type Service } from '@nodelet/api';
import { startControlPlane, type ControlPlane } from '@nodelet/control-plane';
import { NodeDns } from '../../src/dns/node-dns.js';
import { ask, startFakeUpstream, type FakeUpstream } from '../../src/dns/testing/dns-client.js';

const NODE = 'dns-it-node';
const rdata = (a: Answer): string => ('data' in a ? String(a.data) : '');
const ZONE = 'cluster.local';
const execFileP = promisify(execFile);

interface NodeCredentialRequest extends KubeObject {
  spec: { nodeName: string };
  status?: { token?: string };
}
const NODE_CREDENTIALS: ResourceType<NodeCredentialRequest> = Object.freeze({ group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential', namespaced: false });

describe('cluster DNS against a real API server', () => {
  let dir: string;
  let cp: ControlPlane | undefined;
  let admin: ApiClient;
  let nodeApi: ApiClient;
  let upstream: FakeUpstream;
  let dns: NodeDns;
  let addr: { ip: string; port: number };
  const registry = new Registry();
  const podIPs = new Map<string, string>();

  /** A pod bound to the fake node and marked Running/Ready with `ip`, as its agent would report it. */
  async function readyPod(name: string, ip: string, labels: Record<string, string>, extra: Partial<Pod['spec']> = {}): Promise<void> {
    await admin.create(PODS, {
      metadata: { name, namespace: 'default', labels },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: 'busybox:1.36', ports: [{ name: 'http', containerPort: 8080 }, { name: 'pg', containerPort: 5432 }] }], ...extra },
    });
    await admin.patch(PODS, name, { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] } }, { namespace: 'default', subresource: 'status', type: 'merge' });
    podIPs.set(name, ip);
  }

  const aRecords = async (name: string, o: { tcp?: boolean; edns?: number } = {}): Promise<string[]> =>
    ((await ask(addr, name, 'A', o)).answers ?? []).filter((a) => a.type === 'A').map((a) => rdata(a)).sort();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nodelet-dns-it-'));
    cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', logger: noopLogger, nodeMonitorGracePeriodMs: 600_000 });
    admin = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
    // The resolver reads the cluster as the node does: with a node credential (Node authorizer + RBAC).
    const { token, secret } = newBootstrapToken(Date.now() + 600_000);
    await admin.create(SECRETS, secret as never);
    const boot = new ApiClient({ server: cp.url, token, ca: cp.caPem });
    const cred = await boot.create(NODE_CREDENTIALS, { apiVersion: 'nodelet.io/v1', kind: 'NodeCredentialRequest', metadata: {}, spec: { nodeName: NODE } });
    boot.close();
    nodeApi = new ApiClient({ server: cp.url, token: cred.status!.token!, ca: cp.caPem });
    await nodeApi.create(NODES, { metadata: { name: NODE }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } as never);

    upstream = await startFakeUpstream({
      'www.example.org A': [{ type: 'A', name: 'www.example.org', ttl: 60, class: 'IN', data: '192.0.2.80' }],
    });
    dns = await NodeDns.start({
      api: nodeApi,
      bind: { ip: '127.0.0.1', port: 0 },
      clusterDomain: ZONE,
      clusterDNS: ['10.96.0.10'],
      resolvConf: '',
      podRecords: 'insecure',
      registry,
      log: noopLogger,
      upstreams: [upstream.address],
    });
    addr = dns.address;

    await admin.create(SERVICES, { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } });
    await admin.create(SERVICES, { metadata: { name: 'db', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] } });
    await admin.create(SERVICES, { metadata: { name: 'big', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'big' }, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] } });
    await admin.create(SERVICES, { metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'www.example.org' } });
    await readyPod('web-a', '10.244.0.11', { app: 'web' });
    await readyPod('web-b', '10.244.0.12', { app: 'web' });
    await readyPod('db-0', '10.244.0.21', { app: 'db' }, { hostname: 'db-0', subdomain: 'db' });
    await readyPod('db-1', '10.244.0.22', { app: 'db' }, { hostname: 'db-1', subdomain: 'db' });
    for (let i = 0; i < 40; i++) await readyPod(`big-${i}`, `10.244.1.${i + 10}`, { app: 'big' });
    await pollUntil('the resolver to see the EndpointSlices', async () => dns.synced() && (await aRecords(`big.default.svc.${ZONE}`, { tcp: true })).length === 40 && (await aRecords(`db.default.svc.${ZONE}`)).length === 2, { timeoutMs: 30_000, intervalMs: 100 });
  });

  after(async () => {
    await dns?.close();
    await upstream?.close();
    admin?.close();
    nodeApi?.close();
    await cp?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('A of a Service is its ClusterIP with TTL 30; kube-dns resolves to 10.96.0.10', async () => {
    const web = await admin.get(SERVICES, 'web', { namespace: 'default' });
    const r = await ask(addr, `web.default.svc.${ZONE}`, 'A');
    assert.equal(r.rcode, 'NOERROR');
    assert.equal(r.flag_aa, true);
    assert.deepEqual(r.answers!.map((a) => [a.type, 'data' in a && a.data, 'ttl' in a && a.ttl]), [['A', web.spec!.clusterIP, 30]]);
    assert.deepEqual(await aRecords(`kube-dns.kube-system.svc.${ZONE}`), ['10.96.0.10']);
  });

  it('a headless Service has one A per ready pod, and per-pod names from hostname/subdomain', async () => {
    assert.deepEqual(await aRecords(`db.default.svc.${ZONE}`), ['10.244.0.21', '10.244.0.22']);
    assert.deepEqual(await aRecords(`db-0.db.default.svc.${ZONE}`), ['10.244.0.21']);
    assert.deepEqual(await aRecords(`db-1.db.default.svc.${ZONE}`), ['10.244.0.22']);
    assert.deepEqual(await aRecords(`10-244-0-11.web.default.svc.${ZONE}`), ['10.244.0.11']);
  });

  it('SRV of named ports, with the targets A records in the additional section', async () => {
    const db = await ask(addr, `_pg._tcp.db.default.svc.${ZONE}`, 'SRV');
    assert.deepEqual(db.answers!.map((a) => a.type === 'SRV' && `${a.data.target} ${a.data.port} ${a.data.weight}`).sort(), [`db-0.db.default.svc.${ZONE} 5432 50`, `db-1.db.default.svc.${ZONE} 5432 50`]);
    assert.deepEqual(db.additionals!.filter((a) => a.type === 'A').map((a) => `${a.name} ${rdata(a)}`).sort(), [`db-0.db.default.svc.${ZONE} 10.244.0.21`, `db-1.db.default.svc.${ZONE} 10.244.0.22`]);
    const web = await ask(addr, `_http._tcp.web.default.svc.${ZONE}`, 'SRV');
    const svc = await admin.get(SERVICES, 'web', { namespace: 'default' });
    assert.deepEqual(web.answers!.map((a) => a.type === 'SRV' && `${a.data.target} ${a.data.port}`), [`web.default.svc.${ZONE} 80`]);
    assert.deepEqual(web.additionals!.filter((a) => a.type === 'A').map((a) => rdata(a)), [svc.spec!.clusterIP]);
  });

  it('PTR of a ClusterIP and of an endpoint IP', async () => {
    const ip = (await admin.get(SERVICES, 'web', { namespace: 'default' })).spec!.clusterIP!;
    const rev = `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
    assert.deepEqual((await ask(addr, rev, 'PTR')).answers!.map((a) => rdata(a)), [`web.default.svc.${ZONE}`]);
    assert.deepEqual((await ask(addr, '21.0.244.10.in-addr.arpa', 'PTR')).answers!.map((a) => rdata(a)), [`db-0.db.default.svc.${ZONE}`]);
  });

  it('CNAME for ExternalName (A chases the target through the upstream); pod A records', async () => {
    const c = await ask(addr, `ext.default.svc.${ZONE}`, 'CNAME');
    assert.deepEqual(c.answers!.map((a) => `${a.type} ${rdata(a)}`), ['CNAME www.example.org']);
    const a = await ask(addr, `ext.default.svc.${ZONE}`, 'A');
    assert.deepEqual(a.answers!.map((r) => `${r.type} ${rdata(r)}`), ['CNAME www.example.org', 'A 192.0.2.80']);
    assert.deepEqual(await aRecords(`10-244-0-11.default.pod.${ZONE}`), ['10.244.0.11']);
  });

  it('NXDOMAIN carries the SOA with TTL 5', async () => {
    const r = await ask(addr, `nope.default.svc.${ZONE}`, 'A');
    assert.equal(r.rcode, 'NXDOMAIN');
    const soa = r.authorities![0]!;
    assert.equal(soa.type, 'SOA');
    assert.equal(soa.type === 'SOA' && soa.ttl, 5);
    assert.equal(soa.type === 'SOA' && soa.data.minimum, 5);
    assert.equal((await ask(addr, `web.nowhere.svc.${ZONE}`, 'A')).rcode, 'NXDOMAIN', 'a namespace that does not exist');
  });

  it('40 endpoints: TC over UDP, everything over TCP', async () => {
    const udp = await ask(addr, `big.default.svc.${ZONE}`, 'A');
    assert.equal(udp.flag_tc, true);
    assert.ok(udp.size <= 512, `UDP reply of ${udp.size} bytes`);
    const tcp = await ask(addr, `big.default.svc.${ZONE}`, 'A', { tcp: true });
    assert.equal(tcp.flag_tc, false);
    assert.deepEqual(tcp.answers!.map((a) => rdata(a)).sort(), [...podIPs].filter(([n]) => n.startsWith('big-')).map(([, ip]) => ip).sort());
  });

  it('forwards other names to the upstream; cluster names never reach it', async () => {
    assert.deepEqual(await aRecords('www.example.org'), ['192.0.2.80']);
    assert.ok(upstream.asked.includes('www.example.org A udp'));
    assert.ok(upstream.asked.every((q) => !q.includes(ZONE)), upstream.asked.join(', '));
  });

  it('dig (BIND 9, a DNS implementation nobody here wrote) reads the answers: A, SRV with additionals, PTR, NXDOMAIN, TC then TCP', async (t) => {
    if (spawnSync('dig', ['-v']).status !== 0) return t.skip('dig not installed (apt-get install bind9-dnsutils; make deps installs it)');
    // Asynchronous: the resolver under test answers on this process's event loop.
    const dig = async (...args: string[]): Promise<string> => {
      const { stdout } = await execFileP('dig', [`@${addr.ip}`, '-p', String(addr.port), '+time=2', '+tries=1', ...args], { encoding: 'utf8' });
      return stdout;
    };
    const web = await admin.get(SERVICES, 'web', { namespace: 'default' });
    const a = await dig(`web.default.svc.${ZONE}`, 'A', '+noall', '+answer', '+comments');
    assert.match(a, /status: NOERROR/);
    assert.match(a, /flags: qr aa rd/);
    assert.match(a, new RegExp(`^web\\.default\\.svc\\.cluster\\.local\\.\\s+30\\s+IN\\s+A\\s+${web.spec!.clusterIP!.replaceAll('.', '\\.')}$`, 'm'));
    const srv = await dig(`_pg._tcp.db.default.svc.${ZONE}`, 'SRV', '+noall', '+answer', '+additional');
    for (const [host, ip] of [['db-0', '10.244.0.21'], ['db-1', '10.244.0.22']] as const) {
      assert.match(srv, new RegExp(`\\sSRV\\s+0 50 5432 ${host}\\.db\\.default\\.svc\\.cluster\\.local\\.$`, 'm'), srv);
      assert.match(srv, new RegExp(`^${host}\\.db\\.default\\.svc\\.cluster\\.local\\.\\s+\\d+\\s+IN\\s+A\\s+${ip.replaceAll('.', '\\.')}$`, 'm'), srv);
    }
    assert.match(await dig('-x', '10.244.0.21', '+short'), new RegExp(`^db-0\\.db\\.default\\.svc\\.cluster\\.local\\.$`, 'm'));
    const nx = await dig(`nope.default.svc.${ZONE}`, 'A', '+noall', '+comments', '+authority');
    assert.match(nx, /status: NXDOMAIN/);
    assert.match(nx, /^cluster\.local\.\s+5\s+IN\s+SOA\s/m);
    // 40 endpoints do not fit a 512-byte UDP reply: dig sees TC and retries over TCP by itself.
    const big = await dig(`big.default.svc.${ZONE}`, 'A', '+noedns', '+noall', '+answer', '+comments');
    assert.match(big, /Truncated, retrying in TCP mode/);
    assert.equal((big.match(/\sIN\s+A\s+10\.244\.1\.\d+$/gm) ?? []).length, 40, big);
  });

  it('follows changes: a deleted Service is NXDOMAIN, a new one resolves', async () => {
    await admin.delete(SERVICES, 'web', { namespace: 'default' });
    await pollUntil('web to disappear', async () => (await ask(addr, `web.default.svc.${ZONE}`, 'A')).rcode === 'NXDOMAIN', { timeoutMs: 10_000, intervalMs: 50 });
    const created: Service = await admin.create(SERVICES, { metadata: { name: 'late', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    await pollUntil('late to resolve', async () => (await aRecords(`late.default.svc.${ZONE}`))[0] === created.spec!.clusterIP, { timeoutMs: 10_000, intervalMs: 50 });
  });

  it('keeps answering while the API server is stopped', async () => {
    await cp!.close();
    cp = undefined;
    assert.deepEqual(await aRecords(`db.default.svc.${ZONE}`), ['10.244.0.21', '10.244.0.22']);
    assert.equal((await ask(addr, `nope.default.svc.${ZONE}`, 'A')).rcode, 'NXDOMAIN');
    assert.equal((await ask(addr, `big.default.svc.${ZONE}`, 'A', { tcp: true })).answers!.length, 40);
    assert.match(await registry.metrics(), /coredns_dns_requests_total\{[^}]*zone="cluster\.local\."[^}]*\} \d+/);
  });
});
