// NetworkPolicy enforcement: rule programming time and TCP connection setup cost with no policy vs
// 1,000 policies, in the same run. The 1,000 policies all select the server pod (the worst case
// for a new connection: its dispatch chain jumps through every one of them before the last allows
// the client); programming is measured for the 1,000 at once (informers have them → live) and for
// one more policy added on top of them (a partial sync).
//
//   node --conditions=source --import tsx bench/netpol.ts [--policies 1000] [--connects 300]
//
// Needs root and nft. Runs in network namespaces it creates (npx-*), with an in-memory API
// server; the ServiceProxy and NetworkPolicyEnforcer are the agent's. The load average is
// printed: other work on the machine shows in every number.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { Informer, NAMESPACES, NETWORKPOLICIES, PODS, type Namespace, type NetworkPolicy, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger, pollUntil, systemClock } from '@nodelet/base';
import { ServiceProxy } from '../agent/src/proxy/proxier.js';
import { resolveProxyConfig } from '../agent/src/proxy/config.js';
import { NetworkPolicyEnforcer } from '../agent/src/netpol/enforcer.js';
import type { NetpolContribution } from '../agent/src/netpol/render.js';
import { namespace, pod, policy } from '../agent/src/netpol/testing/fixtures.js';
import { NetnsNode } from '../agent/test/integration/proxy-netns.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({ options: { policies: { type: 'string', default: '1000' }, connects: { type: 'string', default: '300' } } });
const POLICIES = Number(args.policies);
const CONNECTS = Number(args.connects);

if (process.getuid?.() !== 0) {
  process.stderr.write('bench/netpol: needs root (netns, nft)\n');
  process.exit(2);
}


const net = new NetnsNode();
const server = await InMemoryApiServer.start();
const api = server.client();
const informers: Array<{ close(): Promise<void> }> = [];
let proxy: ServiceProxy | undefined;
try {
  net.setup();
  const web = net.addPod(1);
  const client = net.addPod(2);
  await net.serve(web.ns, 'web', { tcp: 8080 });
  await api.create(NAMESPACES, namespace('bench'));
  await api.create(PODS, pod('web', 'bench', { app: 'web' }, web.ip));
  await api.create(PODS, pod('client', 'bench', { app: 'client' }, client.ip));
  const inf = { client: api, clock: systemClock, logger: noopLogger };
  const policies = new Informer<NetworkPolicy>({ ...inf, resource: NETWORKPOLICIES });
  const namespaces = new Informer<Namespace>({ ...inf, resource: NAMESPACES });
  const pods = new Informer<Pod>({ ...inf, resource: PODS });
  informers.push(policies, namespaces, pods);
  const enforcer = new NetworkPolicyEnforcer({ nodeName: 'n1', log: noopLogger, clock: systemClock, informers: { policies, namespaces, pods } });
  let live: NetpolContribution | undefined;
  const written = enforcer.written.bind(enforcer);
  enforcer.written = (c) => {
    live = c as NetpolContribution;
    written(c);
  };
  proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({}), log: noopLogger, registry: new Registry(), netns: net.node, extension: enforcer });
  await proxy.synced;

  /** Milliseconds from `t0` (and from the informer holding `n` policies) to the rules of `n` being live. */
  const programmed = async (n: number, t0: number): Promise<{ total: number; sync: number }> => {
    await pollUntil(`${n} policies in the informer`, () => policies.list().length >= n, { timeoutMs: 600_000, intervalMs: 5 });
    const seen = performance.now();
    await pollUntil('the rules are live', () => (live?.policyKeys.size ?? 0) >= n, { timeoutMs: 600_000, intervalMs: 5 });
    return { total: performance.now() - t0, sync: performance.now() - seen };
  };
  const connects = async (): Promise<number[]> => {
    const ms = await net.client<Array<number | null>>(client.ns, ['connect', '--host', web.ip, '--port', '8080', '--count', String(CONNECTS)]);
    if (ms.some((x) => x === null)) throw new Error('a connection failed');
    return ms as number[];
  };

  const none = await connects();
  const t0 = performance.now();
  for (let i = 0; i < POLICIES - 1; i++) {
    await api.create(NETWORKPOLICIES, policy(`p${i}`, 'bench', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: `nobody-${i}` } } }], ports: [{ port: 8080 }] }] }));
  }
  await api.create(NETWORKPOLICIES, policy('allow-client', 'bench', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'client' } } }] }] }));
  const bulk = await programmed(POLICIES, t0);
  const t1 = performance.now();
  await api.create(NETWORKPOLICIES, policy('one-more', 'bench', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'x' } } }] }] }));
  const one = await programmed(POLICIES + 1, t1);
  const many = await connects();

  const [l1, l5] = loadavg();
  console.log(`bench/netpol: load average ${l1!.toFixed(2)} / ${l5!.toFixed(2)} (1/5 min); a loaded machine shows in every number`);
  console.log(`programming ${POLICIES} policies: API writes → live ${bulk.total.toFixed(0)} ms; informer complete → live ${bulk.sync.toFixed(0)} ms`);
  console.log(`one more policy on top: write → live ${one.total.toFixed(1)} ms (a partial sync)`);
  console.log(`TCP connect, ${CONNECTS} each   p50 / p99 ms`);
  console.log(`  no policy         ${percentile(none, 50).toFixed(2)} / ${percentile(none, 99).toFixed(2)}`);
  console.log(`  ${POLICIES} policies    ${percentile(many, 50).toFixed(2)} / ${percentile(many, 99).toFixed(2)}`);
} finally {
  await proxy?.close();
  await Promise.all(informers.map((i) => i.close()));
  api.close();
  await server.close();
  await net.destroy();
}
