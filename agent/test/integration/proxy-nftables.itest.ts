/**
 * The service proxy against real nftables and conntrack, in network namespaces this file creates
 * (proxy-netns.ts): pods are veths on a bridge running proxy-peer.mjs, the API is an in-memory
 * server the test writes Services and EndpointSlices to. Traffic goes to a service IP only after
 * the table holding it is live (`waitForRule`).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Registry } from 'prom-client';
import { pollUntil } from '@nodelet/base';
import { ApiClient, ENDPOINTSLICES, SERVICES, type EndpointSlice, type Service } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ServiceProxy } from '../../src/proxy/proxier.js';
import { resolveProxyConfig } from '../../src/proxy/config.js';
import { Nft, mapKeys } from '../../src/proxy/nft.js';
import { commandRunner } from '../../src/proxy/exec.js';
import { service, slice, type EpSpec } from '../../src/proxy/testing/fixtures.js';
import { NetnsNode, type HttpResult } from './proxy-netns.js';

const enabled = process.env.AGENT_IT === '1' && process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0 && spawnSync('conntrack', ['--version']).status === 0;
const skip = enabled ? false : 'needs AGENT_IT=1, root, nft and conntrack (Debian nftables, conntrack)';

let net: NetnsNode;
let server: InMemoryApiServer;
let api: ApiClient;
let proxy: ServiceProxy;
let nft: Nft;
const registry = new Registry();
const pods: Array<{ ns: string; ip: string }> = [];
let client: { ns: string; ip: string };

before(async () => {
  if (skip) return;
  net = new NetnsNode();
  net.setup();
  for (let i = 1; i <= 4; i++) pods.push(net.addPod(i));
  client = net.addPod(9);
  for (let i = 0; i < 3; i++) await net.serve(pods[i]!.ns, `p${i + 1}`, { tcp: 8080, udp: 5353 });
  server = await InMemoryApiServer.start();
  api = server.client();
  nft = new Nft(commandRunner(net.node));
  const config = resolveProxyConfig({ driftCheckPeriod: '300ms' });
  proxy = await ServiceProxy.start({ api, nodeName: 'n1', config, log: quietLog, registry, netns: net.node });
}, { timeout: 60_000 });

after(async () => {
  if (skip) return;
  try {
    await proxy?.close();
    api?.close();
    await server?.close();
  } finally {
    await net?.destroy(); // the namespaces go even when a close fails
  }
});

/** A sample's value from the proxy's metrics (histogram `_count`s, counters). */
async function count(name: string): Promise<number> {
  const all = await registry.getMetricsAsJSON();
  for (const m of all) for (const v of m.values as Array<{ metricName?: string; value: number }>) if ((v.metricName ?? m.name) === name) return v.value;
  return 0;
}

const quietLog = { error() {}, warn() {}, info() {}, debug() {}, child: () => quietLog };

async function live(): Promise<string[]> {
  return mapKeys(await nft.listJson('nodelet-proxy', AbortSignal.timeout(5000)), 'service-ips');
}

/** Waits until `ip . proto . port` is in the live service-ips map (the rule that sends it on). */
async function waitForRule(ip: string, port: number, proto = 'tcp'): Promise<void> {
  await pollUntil(`${ip}:${port}/${proto} in the live table`, async () => (await live()).includes(`${ip} . ${proto} . ${port}`), { timeoutMs: 10_000, intervalMs: 50 });
}

async function put(svc: Service, eps: EpSpec[], ports?: EndpointSlice['ports']): Promise<void> {
  const name = svc.metadata.name!;
  await api.resource(SERVICES, 'default').create(svc).catch(async () => {
    const cur = await api.get(SERVICES, name, { namespace: 'default' });
    await api.resource(SERVICES, 'default').update({ ...svc, metadata: { ...svc.metadata, resourceVersion: cur.metadata.resourceVersion } });
  });
  await setEndpoints(name, eps, ports);
}

async function setEndpoints(name: string, eps: EpSpec[], ports?: EndpointSlice['ports']): Promise<void> {
  const s = slice(name, eps, ports);
  const sl = api.resource(ENDPOINTSLICES, 'default');
  const cur = await api.get(ENDPOINTSLICES, s.metadata.name!, { namespace: 'default' }).catch(() => undefined);
  if (cur) await sl.update({ ...s, metadata: { ...s.metadata, resourceVersion: cur.metadata.resourceVersion } });
  else await sl.create(s);
}

const names = (rs: HttpResult[]): string[] => rs.map((r) => (r.ok ? r.body!.split(' ')[0]! : `error:${r.code}`));

test('the base table is in place before the first sync and rejects unallocated service IPs', { skip }, async () => {
  await proxy.ready;
  assert.ok((await nft.listText('nodelet-proxy', AbortSignal.timeout(5000))).includes('reject traffic to unallocated ClusterIPs'));
  await proxy.synced;
  const [r] = await net.http(client.ns, 'http://10.96.200.200/');
  assert.equal(r!.ok, false);
  assert.equal(r!.code, 'ECONNREFUSED', 'an address of the service CIDR no Service holds is refused, not routed out');
  assert.ok(r!.ms < 1000, `refused at once (${r!.ms} ms)`);
});

test('a ClusterIP load-balances across 3 ready endpoints; not-ready ones get nothing', { skip }, async () => {
  await put(service('web', '10.96.0.5'), [{ ip: pods[0]!.ip }, { ip: pods[1]!.ip }, { ip: pods[2]!.ip }, { ip: pods[3]!.ip, ready: false }]);
  await waitForRule('10.96.0.5', 80);
  const rs = names(await net.http(client.ns, 'http://10.96.0.5/', 60));
  const counts = Object.fromEntries(['p1', 'p2', 'p3'].map((p) => [p, rs.filter((x) => x === p).length]));
  assert.equal(rs.length, 60);
  assert.deepEqual(rs.filter((x) => !['p1', 'p2', 'p3'].includes(x)), [], 'every request answered by a ready endpoint');
  for (const [p, n] of Object.entries(counts)) assert.ok(n >= 5, `${p} got ${n}/60: ${JSON.stringify(counts)}`);
});

test('sessionAffinity ClientIP sticks across a partial sync (the sets stay) and a full one (entries carried over)', { skip }, async () => {
  await put(service('sticky', '10.96.0.6', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } }), [{ ip: pods[0]!.ip }, { ip: pods[1]!.ip }, { ip: pods[2]!.ip }]);
  await waitForRule('10.96.0.6', 80);
  const first = names(await net.http(client.ns, 'http://10.96.0.6/', 15));
  assert.equal(new Set(first).size, 1, `one backend: ${first.join(',')}`);
  const entries = async (): Promise<unknown[]> => {
    const sets = (await nft.listJson('nodelet-proxy', AbortSignal.timeout(5000))).nftables.map((o) => o.set as { name?: string; elem?: Array<{ elem?: { val?: string } }> } | undefined);
    return sets.filter((x) => x?.name?.includes('/sticky/')).flatMap((x) => (x!.elem ?? []).map((e) => e.elem?.val));
  };
  const fulls = async (): Promise<number> => count('kubeproxy_sync_full_proxy_rules_duration_seconds_count');
  const partials = async (): Promise<number> => count('kubeproxy_sync_partial_proxy_rules_duration_seconds_count');
  const [f0, p0] = [await fulls(), await partials()];
  await put(service('other', '10.96.0.7'), [{ ip: pods[0]!.ip }]);
  await waitForRule('10.96.0.7', 80);
  assert.equal(await fulls(), f0, 'a new Service is a partial sync');
  assert.ok((await partials()) > p0);
  assert.deepEqual(await entries(), [client.ip], 'the affinity set and its entry are untouched by a partial sync');
  assert.deepEqual(new Set(names(await net.http(client.ns, 'http://10.96.0.6/', 10))), new Set(first));
  proxy.requestFullSync();
  await pollUntil('a full sync', async () => (await fulls()) > f0, { timeoutMs: 10_000, intervalMs: 50 });
  assert.deepEqual(await entries(), [client.ip], 'the client’s affinity entry was carried into the rewritten table');
  const again = names(await net.http(client.ns, 'http://10.96.0.6/', 10));
  assert.deepEqual(new Set(again), new Set(first), 'the affinity entry survived the rewrite');
});

test('no endpoints: refused (not dropped); 0 → 3 serves again after the EndpointSlice change', { skip }, async () => {
  await put(service('scale', '10.96.0.8'), []);
  await pollUntil('scale in no-endpoint-services', async () => mapKeys(await nft.listJson('nodelet-proxy', AbortSignal.timeout(5000)), 'no-endpoint-services').includes('10.96.0.8 . tcp . 80'), { timeoutMs: 10_000, intervalMs: 50 });
  const [r] = await net.http(client.ns, 'http://10.96.0.8/');
  // ECONNREFUSED is the reject rule's answer; a dropped packet would end in a timeout instead.
  assert.equal(r!.code, 'ECONNREFUSED');
  const poll = net.client<HttpResult>(client.ns, ['http-until-ok', '--url', 'http://10.96.0.8/', '--within', '5000']);
  await setEndpoints('scale', [{ ip: pods[0]!.ip }, { ip: pods[1]!.ip }, { ip: pods[2]!.ip }]);
  const ok = await poll;
  assert.equal(ok.ok, true, JSON.stringify(ok));
});

test('hairpin: a pod reaches itself through its own Service', { skip }, async () => {
  await put(service('self', '10.96.0.9'), [{ ip: pods[0]!.ip }]);
  await waitForRule('10.96.0.9', 80);
  const [r] = await net.http(pods[0]!.ns, 'http://10.96.0.9/');
  assert.equal(r!.ok, true, JSON.stringify(r));
  assert.equal(r!.body, 'p1 10.244.0.1', 'the pod sees the node (masqueraded), so the reply comes back through it');
});

test('NodePort answers on the node address from outside and on 127.0.0.1 from the node', { skip }, async () => {
  await put(service('np', '10.96.0.11', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] }), [{ ip: pods[1]!.ip }]);
  await waitForRule('10.96.0.11', 80);
  const [ext] = await net.http(net.ext, `http://${net.nodeIP}:30080/`);
  assert.equal(ext!.ok, true, JSON.stringify(ext));
  assert.match(ext!.body!, /^p2 /);
  const [local] = await net.http(net.node, 'http://127.0.0.1:30080/');
  assert.equal(local!.ok, true, JSON.stringify(local));
  assert.match(local!.body!, /^p2 /);
  assert.equal(net.inNode(['sysctl', '-n', 'net.ipv4.conf.all.route_localnet']).trim(), '1');
});

test('UDP: the stale conntrack entry goes when the only backend is replaced', { skip }, async () => {
  const ports: EndpointSlice['ports'] = [{ port: 5353, protocol: 'UDP' }];
  await put(service('udp', '10.96.0.12', { ports: [{ port: 53, protocol: 'UDP' }] }), [{ ip: pods[0]!.ip }], ports);
  await waitForRule('10.96.0.12', 53, 'udp');
  const send = () => net.client<HttpResult[]>(client.ns, ['udp', '--host', '10.96.0.12', '--port', '53', '--sport', '40053', '--count', '1']);
  const [a] = await send();
  assert.match(a!.body ?? '', /^p1 /);
  await setEndpoints('udp', [{ ip: pods[1]!.ip }], ports);
  // p1 still answers, so without the cleanup the same 5-tuple would keep reaching it.
  const r = await pollUntil('p2 to answer the same client port', async () => {
    const [x] = await send();
    return x?.body?.startsWith('p2 ') ? x : undefined;
  }, { timeoutMs: 5000, intervalMs: 100 });
  assert.match(r.body!, /^p2 /);
});

test('many Services, then one EndpointSlice change: live after a partial transaction only', { skip }, async () => {
  const many = 300;
  for (let i = 0; i < many; i++) await put(service(`bulk${i}`, `10.96.${2 + Math.floor(i / 200)}.${(i % 200) + 1}`), [{ ip: pods[i % 3]!.ip }]);
  await waitForRule(`10.96.${2 + Math.floor((many - 1) / 200)}.${((many - 1) % 200) + 1}`, 80);
  await put(service('flip', '10.96.0.13'), [{ ip: pods[0]!.ip }]);
  await waitForRule('10.96.0.13', 80);
  const [f0, p0] = [await count('kubeproxy_sync_full_proxy_rules_duration_seconds_count'), await count('kubeproxy_sync_partial_proxy_rules_duration_seconds_count')];
  await setEndpoints('flip', [{ ip: pods[2]!.ip }]);
  const r = await pollUntil('flip served by p3', async () => {
    const [x] = await net.http(client.ns, 'http://10.96.0.13/');
    return x?.body?.startsWith('p3 ') ? x : undefined;
  }, { timeoutMs: 10_000, intervalMs: 50 });
  assert.match(r.body!, /^p3 /);
  // The rule is live as soon as nft -f returns; the sync records its duration just after.
  await pollUntil('the partial sync recorded', async () => (await count('kubeproxy_sync_partial_proxy_rules_duration_seconds_count')) > p0, { timeoutMs: 5_000, intervalMs: 20 });
  assert.equal(await count('kubeproxy_sync_full_proxy_rules_duration_seconds_count'), f0, 'and no full one');
});

test('drift: a flushed chain is put back (a fixed chain and a service chain)', { skip }, async () => {
  await waitForRule('10.96.0.5', 80);
  const before = (await proxy.metrics.driftRepairs.get()).values[0]?.value ?? 0;
  const target = (await nft.listText('nodelet-proxy', AbortSignal.timeout(5000))).match(/10\.96\.0\.5 \. tcp \. 80 : goto ([^\s,]+)/)![1]!;
  // Flush and look in one go: the repair comes as soon as the proxy sees the change.
  const flushed = net.inNode(['sh', '-c', `nft flush chain ip nodelet-proxy services && nft flush chain ip nodelet-proxy '${target}' && nft list chain ip nodelet-proxy services && nft list chain ip nodelet-proxy '${target}'`]);
  assert.doesNotMatch(flushed, /vmap/, 'the flush emptied the dispatch chains');
  await pollUntil('the drift repair', async () => ((await proxy.metrics.driftRepairs.get()).values[0]?.value ?? 0) > before, { timeoutMs: 5000, intervalMs: 50 });
  const ok = await net.client<HttpResult>(client.ns, ['http-until-ok', '--url', 'http://10.96.0.5/', '--within', '5000']);
  assert.equal(ok.ok, true, JSON.stringify(ok));
  await pollUntil('the service chain rewritten', async () => /numgen random mod 3/.test(net.inNode(['nft', 'list', 'chain', 'ip', 'nodelet-proxy', target])), { timeoutMs: 5000, intervalMs: 50 });
});
