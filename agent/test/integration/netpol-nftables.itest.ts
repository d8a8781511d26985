/**
 * NetworkPolicy enforcement against real nftables, in network namespaces this file creates
 * (proxy-netns.ts): "pods" are veths on the node namespace's bridge running proxy-peer.mjs, the
 * external host stands for anything outside the cluster, the API is an in-memory server the test
 * writes Pods, Namespaces and NetworkPolicies to. The service proxy runs with the enforcer as
 * its table extension, as in the agent. Connections are tried only once the rules are live
 * (`waitForSync`: the proxy reported a sync with the enforcer's latest contribution).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Registry } from 'prom-client';
import { pollUntil, systemClock } from '@nodelet/base';
import { ApiClient, Informer, NAMESPACES, NETWORKPOLICIES, PODS, type Namespace, type NetworkPolicy, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ServiceProxy } from '../../src/proxy/proxier.js';
import { resolveProxyConfig } from '../../src/proxy/config.js';
import { NetworkPolicyEnforcer } from '../../src/netpol/enforcer.js';
import type { NetpolContribution } from '../../src/netpol/render.js';
import { namespace, pod, policy } from '../../src/netpol/testing/fixtures.js';
import { commandRunner } from '../../src/proxy/exec.js';
import { NetnsNode } from './proxy-netns.js';

const enabled = process.env.AGENT_IT === '1' && process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;
const skip = enabled ? false : 'needs AGENT_IT=1, root and nft (Debian nftables)';

const quietLog = { error() {}, warn() {}, info() {}, debug() {}, child: () => quietLog };

let net: NetnsNode;
let server: InMemoryApiServer;
let api: ApiClient;
let proxy: ServiceProxy;
let enforcer: NetworkPolicyEnforcer;
const informers: Array<Informer<Pod> | Informer<Namespace> | Informer<NetworkPolicy>> = [];
let written = 0;
/** The enforcer's contribution that is live (the proxy wrote it). */
let live: NetpolContribution | undefined;
const web = { ns: '', ip: '' };
const client = { ns: '', ip: '' };
const other = { ns: '', ip: '' };

before(async () => {
  if (skip) return;
  net = new NetnsNode();
  net.setup();
  Object.assign(web, net.addPod(1));
  Object.assign(client, net.addPod(2));
  Object.assign(other, net.addPod(3));
  await net.serve(web.ns, 'web', { tcp: 8080 });
  await net.serve(net.ext, 'ext', { tcp: 8080 });
  // The external host answers pods directly (no masquerade in this setup).
  const route = spawnSync('ip', ['netns', 'exec', net.ext, 'ip', 'route', 'add', '10.244.0.0/16', 'via', net.nodeIP], { encoding: 'utf8' });
  assert.equal(route.status, 0, route.stderr);
  server = await InMemoryApiServer.start();
  api = server.client();
  for (const n of [namespace('app'), namespace('tools', { team: 'tools' })]) await api.create(NAMESPACES, n);
  await api.create(PODS, pod('web', 'app', { app: 'web' }, web.ip, 'n1', [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]));
  await api.create(PODS, pod('client', 'app', { app: 'client' }, client.ip));
  await api.create(PODS, pod('other', 'tools', { app: 'client' }, other.ip));
  const inf = { client: api, clock: systemClock, logger: quietLog };
  const policies = new Informer<NetworkPolicy>({ ...inf, resource: NETWORKPOLICIES });
  const namespaces = new Informer<Namespace>({ ...inf, resource: NAMESPACES });
  const pods = new Informer<Pod>({ ...inf, resource: PODS });
  informers.push(policies, namespaces, pods);
  enforcer = new NetworkPolicyEnforcer({ nodeName: 'n1', log: quietLog, clock: systemClock, informers: { policies, namespaces, pods } });
  const wrote = enforcer.written.bind(enforcer);
  enforcer.written = (c) => {
    live = c as NetpolContribution;
    wrote(c);
  };
  const config = resolveProxyConfig({ minSyncPeriod: '100ms' });
  proxy = await ServiceProxy.start({
    api, nodeName: 'n1', config, log: quietLog, registry: new Registry(), netns: net.node, extension: enforcer, table: 'nodelet-proxy',
    onSync: () => void written++,
  });
  await proxy.synced;
}, { timeout: 60_000 });

after(async () => {
  if (skip) return;
  try {
    await proxy?.close();
    await Promise.all(informers.map((i) => i.close()));
    api?.close();
    await server?.close();
  } finally {
    await net?.destroy(); // the namespaces (and the table in the node's) go even when a close fails
  }
});

/** Runs `fn` (an API write), then waits until the live rules hold policy `key` (or no longer do). */
async function change(fn: () => Promise<unknown>, key: string, present = true): Promise<void> {
  await fn();
  await pollUntil(`policy ${key} ${present ? 'in' : 'gone from'} the live table`, () => live?.policyKeys.has(key) === present, { timeoutMs: 10_000, intervalMs: 20 });
}

async function reaches(from: string, url: string): Promise<boolean> {
  const [r] = await net.client<Array<{ ok: boolean }>>(from, ['http', '--url', url, '--timeout', '700']);
  return r!.ok;
}

const webURL = (): string => `http://${web.ip}:8080/`;
const extURL = (): string => `http://${net.extIP}:8080/`;

test('no policy: every pod reaches the server and the external host', { skip }, async () => {
  assert.equal(await reaches(client.ns, webURL()), true);
  assert.equal(await reaches(other.ns, webURL()), true);
  assert.equal(await reaches(other.ns, extURL()), true);
});

test('default deny ingress blocks clients; the node itself still reaches the pod (probes)', { skip }, async () => {
  await change(() => api.create(NETWORKPOLICIES, policy('deny', 'app', { podSelector: {}, policyTypes: ['Ingress'] })), 'app/deny');
  assert.equal(await reaches(client.ns, webURL()), false, 'a client is blocked');
  assert.equal(await reaches(other.ns, webURL()), false);
  assert.equal(await reaches(net.node, webURL()), true, 'the node reaches its pod');
});

test('an allow policy (named port, pods of a labelled namespace) lets exactly those clients in; replies pass', { skip }, async () => {
  await change(() => api.create(NETWORKPOLICIES, policy('allow-tools', 'app', {
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'tools' } } }], ports: [{ port: 'http' }] }],
  })), 'app/allow-tools');
  assert.equal(await reaches(other.ns, webURL()), true, 'tools/other is allowed, and the reply comes back under deny');
  assert.equal(await reaches(client.ns, webURL()), false, 'app/client is still denied');
});

test('a pod on another node (the external host stands in for it) is a peer by its labels: in while it matches, out once it is gone', { skip }, async () => {
  assert.equal(await reaches(net.ext, webURL()), false, 'not a pod of the tools namespace yet');
  await api.create(PODS, pod('remote', 'tools', { app: 'client' }, net.extIP, 'n2'));
  await pollUntil('the remote pod is a peer in the live table', () => live?.sets.get('netpol-ingress-pods') !== undefined && [...(live?.sets.values() ?? [])].some((x) => x.elements.has(net.extIP)), { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(await reaches(net.ext, webURL()), true);
  assert.equal(live?.localIPs.has(net.extIP), false, 'never isolated here: its own node enforces its egress');
  await api.delete(PODS, 'remote', { namespace: 'tools', gracePeriodSeconds: 0 });
  await pollUntil('the remote pod is gone from the live table', () => ![...(live?.sets.values() ?? [])].some((x) => x.elements.has(net.extIP)), { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(await reaches(net.ext, webURL()), false);
});

test('egress rules hold: only the allowed destination, and replies to the pod pass its ingress deny', { skip }, async () => {
  await change(() => api.create(NETWORKPOLICIES, policy('client-egress', 'tools', {
    podSelector: {}, policyTypes: ['Egress', 'Ingress'],
    egress: [{ to: [{ ipBlock: { cidr: '10.244.0.0/16', except: [`${client.ip}/32`] } }], ports: [{ protocol: 'TCP', port: 8000, endPort: 8100 }] }],
  })), 'tools/client-egress');
  assert.equal(await reaches(other.ns, webURL()), true, 'to the web pod (in the block, in the port range)');
  assert.equal(await reaches(other.ns, extURL()), false, 'to the external host: outside the block');
  await change(() => api.delete(NETWORKPOLICIES, 'client-egress', { namespace: 'tools' }), 'tools/client-egress', false);
  assert.equal(await reaches(other.ns, extURL()), true, 'the policy deleted, egress is open again');
});

test('a new pod is isolated before its containers would start: admit resolves once its IP is in the live table', { skip }, async () => {
  const fresh = net.addPod(4);
  await net.serve(fresh.ns, 'fresh', { tcp: 8080 });
  // Not in the API yet (its status is written after the sandbox): the runtime hands the IP over.
  const p = pod('fresh', 'app', { app: 'fresh' }, '');
  p.status = { phase: 'Pending' };
  await enforcer.admit(p, [fresh.ip], AbortSignal.timeout(10_000));
  const live = net.inNode(['nft', 'list', 'map', 'ip', 'nodelet-proxy', 'netpol-ingress-pods']);
  assert.match(live, new RegExp(fresh.ip.replace(/\./g, '\\.')), 'the pod is in the ingress isolation map');
  assert.equal(await reaches(client.ns, `http://${fresh.ip}:8080/`), false, 'default deny of its namespace applies from the first packet');
  assert.equal(await reaches(net.node, `http://${fresh.ip}:8080/`), true);
});

test('a full rewrite of the table (drift repair) keeps the policy rules', { skip }, async () => {
  const seen = written;
  proxy.requestFullSync();
  await pollUntil('a full sync', () => written > seen, { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(await reaches(client.ns, webURL()), false);
  assert.equal(await reaches(other.ns, webURL()), true);
  const run = await commandRunner(net.node).run(['nft', 'list', 'chain', 'ip', 'nodelet-proxy', 'netpol-forward'], { signal: AbortSignal.timeout(5000), timeoutMs: 5000 });
  assert.match(run.stdout, /ct state established,related accept/);
});
