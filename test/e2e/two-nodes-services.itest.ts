// Services and DNS across two nodes that are two machines as far as the network goes: node 1 is
// `labUp` on the host, node 2 is `labAddNode({ netns: true })` in network namespace
// nodelet-nn-2, both on the lab node network 10.228.0.0/24 (bridge nlnn-net; the server, the
// registry and node 1 at 10.228.0.1), pod bridges nlnn0 / nlnn1, cluster CIDR 10.229.0.0/16. Each
// node has its own node IP, nftables proxy table and DNS resolver; nothing but the two agents
// routes the pod CIDRs between them (host-gw: the nodes share the node network).
//
// A 2-replica Deployment pinned to node 2 behind a NodePort Service answers from a pod on each
// node (ClusterIP, the Service's name, the other node's pod IP, both NodePorts) and from the host
// on both node IPs; each pod's DNS goes to its own node's resolver. Stopping node 2's agent leaves
// node 1's table as it was and node 2's table in place; a TCP connection from node 1's pod to a
// pod on node 2 opened before the stop carries its request after the restart; after a restart all
// of it works again. Removing node 2 takes node 1's route to it away.
// Nothing is sent to a Service IP or NodePort before the table of the namespace it is sent from
// (or to) holds it. Everything is removed afterwards, which the test checks.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { stringify as toYaml } from 'yaml';
import { labAddNode, labDown, labPaths, labRemoveNode, labUp, labVxlanVni, netnsName, runningPid, stopProcess, vethName } from '@nodelet/cli';
import { findProcesses } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { inCidr, kubectl, nft, nftMapKeys, proxyTable, type Kubectl } from './helpers.js';
import { agentRoutes, GET } from './two-node-lab.js';

const CLUSTER_CIDR = '10.229.0.0/16';
const NODE_NETWORK = { bridge: 'nlnn-net', cidr: '10.228.0.0/24' };
const HOST_IP = '10.228.0.1';
const KUBE_DNS = '10.96.0.10';
const N1 = 'nn-1';
const N2 = 'nn-2';

/** The addresses busybox nslookup printed after the `Name:` line. */
function answers(out: string): string[] {
  const after = out.split(/^Name:/m).slice(1).join('\n');
  return [...after.matchAll(/Address(?: \d+)?:\s*([0-9.]+)/g)].map((m) => m[1]!);
}

function hostGet(host: string, port: number): Promise<{ ok: boolean; body?: string; code?: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/', agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ ok: true, body: body.trim() }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code }));
  });
}

interface Cluster {
  k: Kubectl;
  ns2: string;
  ips: Record<string, string>;
  clusterIP: string;
  nodePort: number;
  web: Array<{ name: string; ip: string }>;
}

/** Waits until the proxy table of `netns` (host when undefined) holds the Service, its NodePort and kube-dns. */
async function tableHolds(c: Cluster, netns: string | undefined): Promise<void> {
  const where = netns ?? 'the host';
  await pollUntil(`web, its NodePort and kube-dns in the live table of ${where}`, async () => {
    const ips = nftMapKeys('service-ips', netns);
    return ips.includes(`${c.clusterIP} . tcp . 80`) && ips.includes(`${KUBE_DNS} . udp . 53`) && ips.includes(`${KUBE_DNS} . tcp . 53`) &&
      nftMapKeys('service-nodeports', netns).includes(`tcp . ${c.nodePort}`);
  }, { timeoutMs: 60_000 });
  await pollUntil(`both endpoints of web in the live table of ${where}`, async () => {
    const t = proxyTable(netns) ?? '';
    return c.web.every((w) => t.includes(`dnat to ${w.ip}:8080`)) && /numgen random mod 2 /.test(t);
  }, { timeoutMs: 60_000 });
}

/** Everything a pod on `node` should reach; `client` runs there. */
async function checkFromPod(t: TestContext, c: Cluster, client: string, node: string): Promise<void> {
  const names = c.web.map((w) => w.name);
  const exec = async (script: string) => (await c.k('exec', client, '--', 'sh', '-c', script)).trim();
  assert.match(await c.k('exec', client, '--', 'cat', '/etc/resolv.conf'), new RegExp(`^nameserver ${KUBE_DNS.replaceAll('.', '\\.')}$`, 'm'));
  // DNS through kube-dns, which this node's proxy sends to this node's resolver.
  assert.deepEqual(answers(await c.k('exec', client, '--', 'nslookup', 'web.default.svc.cluster.local')), [c.clusterIP], `${client}: FQDN → ClusterIP`);
  // The Service by ClusterIP and by short name (the C library's resolver applies the search path).
  for (const target of [c.clusterIP, 'web']) {
    const body = await exec(GET(target, 80));
    assert.ok(names.includes(body), `${client} on ${node}: http://${target} answered by a web pod: "${body}"`);
  }
  // The pods directly, across nodes for node 1's client; and both nodes' NodePorts.
  for (const w of c.web) assert.equal(await exec(GET(w.ip, 8080)), w.name, `${client} on ${node} → pod ${w.name} at ${w.ip}`);
  for (const [n, ip] of Object.entries(c.ips)) {
    const body = await exec(GET(ip, c.nodePort));
    assert.ok(names.includes(body), `${client} on ${node} → NodePort of ${n} (${ip}:${c.nodePort}): "${body}"`);
  }
  t.diagnostic(`${client} on ${node}: DNS, ClusterIP, name, pod IPs and both NodePorts answer`);
}

async function checkFromHost(c: Cluster): Promise<void> {
  for (const [n, ip] of Object.entries(c.ips)) {
    const r = await hostGet(ip, c.nodePort);
    assert.equal(r.ok, true, `NodePort of ${n} (${ip}:${c.nodePort}) from the host: ${r.code}`);
    assert.ok(c.web.some((w) => w.name === r.body), `NodePort of ${n} answered by a web pod: "${r.body}"`);
  }
}

/** What this test may leave behind: nothing. */
function leftovers(dirs: string[]): string[] {
  const out: string[] = [];
  const netns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
  if (netns.split('\n').some((l) => l.split(' ')[0] === netnsName(N2))) out.push(`netns ${netnsName(N2)}`);
  for (const link of [NODE_NETWORK.bridge, 'nlnn0', 'nlnn1', vethName(N2)]) if (existsSync(`/sys/class/net/${link}`)) out.push(`link ${link}`);
  const routes = spawnSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => /10\.22[89]\./.test(l));
  out.push(...routes.map((r) => `route ${r}`));
  if (proxyTable() !== undefined) out.push('table ip nodelet-proxy');
  const vxlan = `nodelet.${labVxlanVni(CLUSTER_CIDR)}`;
  if (existsSync(`/sys/class/net/${vxlan}`)) out.push(`link ${vxlan}`);
  if (nft(['list', 'chain', 'ip', 'nodelet-pod-network', 'masq-10-229-0-0-16']).status === 0) out.push('chain ip nodelet-pod-network masq-10-229-0-0-16');
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => dirs.some((d) => l.includes(d)));
  out.push(...mounts.map((m) => `mount ${m.split(' ')[4]}`));
  return out;
}

test('two nodes in two network namespaces: a Service whose pods run on node 2 answers from both nodes; DNS on both; stopping an agent removes nothing elsewhere', async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  if (spawnSync('nsenter', ['--version']).status !== 0) return t.skip('nsenter not installed (util-linux)');
  const started = Date.now();
  const dir1 = mkdtempSync(join(tmpdir(), 'nodelet-e2e-nn-1-'));
  const dir2 = mkdtempSync(join(tmpdir(), 'nodelet-e2e-nn-2-'));
  const [apiPort, regPort, api1, hz1, api2, hz2] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const registry = `${HOST_IP}:${regPort}`;
  const lab = {
    stateDir: dir1, apiPort, registry, clusterCidr: CLUSTER_CIDR, bridge: 'nlnn0', nodeName: N1,
    nodeApiPort: api1, healthzPort: hz1, nodeNetwork: NODE_NETWORK,
  };
  const node2 = {
    stateDir: dir2, adminKubeconfig: join(dir1, 'server', 'admin.kubeconfig'), registry, clusterCidr: CLUSTER_CIDR,
    nodeName: N2, bridge: 'nlnn1', nodeApiPort: api2, healthzPort: hz2, netns: true,
  };
  // Node 2 goes first (its agent still serves CNI DEL for its sandboxes), then node 1, the server
  // and the node network; then nothing of the test may remain.
  t.after(async () => {
    try {
      const r = await labRemoveNode(node2);
      if (r.problems.length) t.diagnostic(`node 2 cleanup: ${r.problems.join('; ')}`);
    } finally {
      rmSync(dir2, { recursive: true, force: true });
      const r1 = await labDown(lab);
      if (r1.problems.length) t.diagnostic(`node 1 cleanup: ${r1.problems.join('; ')}`);
      rmSync(dir1, { recursive: true, force: true });
    }
    const procs = await findProcesses((argv) => argv.some((a) => a.includes(dir1) || a.includes(dir2)));
    assert.deepEqual([...leftovers([dir1, dir2]), ...procs.map((p) => `process ${p.pid} ${p.argv.join(' ')}`)], [], 'the test left something behind');
  });

  const up = await labUp(lab);
  const n2 = await labAddNode(node2);
  assert.equal(n2.netns, netnsName(N2));
  const ns2 = n2.netns!;
  t.diagnostic(`two nodes Ready after ${Date.now() - started} ms; node 2 in ${ns2} at ${n2.ip}`);
  const k = kubectl(up.kubeconfig);

  // 1. Two node IPs on the node network, two pod CIDRs, routed both ways by the agents (host-gw).
  const ips: Record<string, string> = {};
  const cidrs: Record<string, string> = {};
  for (const n of [N1, N2]) {
    ips[n] = (await k('get', 'node', n, '-o', 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')).trim();
    cidrs[n] = (await k('get', 'node', n, '-o', 'jsonpath={.spec.podCIDR}')).trim();
    assert.ok(inCidr(ips[n]!, NODE_NETWORK.cidr), `node ${n} IP ${ips[n]} is on the node network`);
    assert.ok(cidrs[n] && inCidr(cidrs[n]!.split('/')[0]!, CLUSTER_CIDR), `node ${n} podCIDR "${cidrs[n]}"`);
  }
  assert.equal(ips[N1], HOST_IP);
  assert.equal(ips[N2], n2.ip);
  assert.notEqual(cidrs[N1], cidrs[N2]);
  await pollUntil('each agent routes the other node\'s pod CIDR through it', () =>
    JSON.stringify(agentRoutes()) === JSON.stringify([[cidrs[N2], ips[N2]]]) && JSON.stringify(agentRoutes(ns2)) === JSON.stringify([[cidrs[N1], ips[N1]]]), { timeoutMs: 30_000 });

  // 2. Two web pods pinned to node 2 behind a NodePort Service; a client pod on each node, whose
  // second and third containers name the lab busybox as the README does (127.0.0.1:5000/…, which
  // each node's containerd sends to the registry on the node network) and as the world does.
  const manifest = join(dir1, 'workload.yaml');
  const pinned = (node: string) => ({ nodeSelector: { 'kubernetes.io/hostname': node }, terminationGracePeriodSeconds: 1 });
  const web = 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www';
  writeFileSync(manifest, [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { ...pinned(N2), containers: [{
        name: 'httpd', image: up.images.busybox, command: ['sh', '-c', web],
        // Every second, one failure flips Ready: under default deny (step 7) it must keep passing.
        readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1, failureThreshold: 1 },
      }] } },
    } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    ...[[N1, 'client-1'], [N2, 'client-2']].map(([node, name]) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'client' }, annotations: { 'kubectl.kubernetes.io/default-container': 'c' } },
      spec: { ...pinned(node!), containers: [up.images.busybox, '127.0.0.1:5000/busybox:latest', 'busybox'].map((image, i) => ({ name: ['c', 'readme', 'world'][i]!, image, command: ['sleep', '3600'] })) },
    })),
  ].map((d) => toYaml(d)).join('---\n'));
  await k('apply', '-f', manifest);
  const ready = (sel: string, n: number) => pollUntil(`${n} ready pods (${sel})`, async () => {
    const list = JSON.parse(await k('get', 'pods', '-l', sel, '-o', 'json')) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { podIP?: string; conditions?: Array<{ type: string; status: string }> } }> };
    const ok = list.items.filter((p) => !p.metadata.deletionTimestamp && p.status.podIP && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ok.length === n && list.items.length === n ? ok.map((p) => ({ name: p.metadata.name, ip: p.status.podIP!, node: p.spec.nodeName! })) : undefined;
  }, { timeoutMs: 120_000 });
  const webPods = await ready('app=web', 2);
  const clients = await ready('app=client', 2);
  for (const w of webPods) assert.ok(w.node === N2 && inCidr(w.ip, cidrs[N2]!), `web pod ${w.name} runs on node 2 with an IP of its pod CIDR (${w.node}, ${w.ip})`);
  assert.deepEqual(clients.map((p) => `${p.name}@${p.node}`).sort(), [`client-1@${N1}`, `client-2@${N2}`]);
  const svc = JSON.parse(await k('get', 'svc', 'web', '-o', 'json')) as { spec: { clusterIP: string; ports: Array<{ nodePort: number }> } };
  const c: Cluster = { k, ns2, ips, clusterIP: svc.spec.clusterIP, nodePort: svc.spec.ports[0]!.nodePort, web: webPods };
  await pollUntil('2 endpoints in the EndpointSlice', async () => (await k('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'jsonpath={.items[*].endpoints[*].addresses[0]}')).trim().split(/\s+/).length === 2, { timeoutMs: 60_000 });

  // 3. Each node's table holds the Service; each sends kube-dns to its own resolver.
  await tableHolds(c, undefined);
  await tableHolds(c, ns2);
  const dnsTarget = (table: string) => [...table.matchAll(/dnat to ([0-9.]+):53\b/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(dnsTarget(proxyTable()!))], [ips[N1]], 'node 1 sends kube-dns to node 1\'s resolver');
  assert.deepEqual([...new Set(dnsTarget(proxyTable(ns2)!))], [ips[N2]], 'node 2 sends kube-dns to node 2\'s resolver');
  // Both masquerade Service traffic from outside the lab's cluster CIDR (node 2 was told it too).
  for (const table of [proxyTable()!, proxyTable(ns2)!]) assert.ok(table.includes(`ip saddr != ${CLUSTER_CIDR} jump mark-for-masquerade`), 'the proxy masquerades by the lab\'s cluster CIDR');

  // 4. From a pod on each node, and from the host to both NodePorts.
  await checkFromPod(t, c, 'client-1', N1);
  await checkFromPod(t, c, 'client-2', N2);
  await checkFromHost(c);

  // 5. Node 2's agent stops (SIGTERM by its PID): node 1's rules stay exactly as they were, node
  // 2's table stays in its namespace (the agent keeps it across restarts), Service traffic from
  // node 1 to node 2's pods keeps flowing.
  const table1 = proxyTable();
  const table2 = proxyTable(ns2);
  const open = await openConnection(up.kubeconfig, k, 'client-1', c.web[0]!.ip);
  const agent2 = labPaths(dir2).agentProc;
  assert.ok(await runningPid(agent2, dir2), 'node 2 agent is running');
  assert.ok(await stopProcess(agent2, dir2), 'node 2 agent was not running when stopped');
  assert.equal(await runningPid(agent2, dir2), undefined);
  assert.equal(proxyTable(), table1, 'node 1\'s table is unchanged after node 2\'s agent stopped');
  assert.equal(proxyTable(ns2), table2, 'node 2\'s table is still in its namespace, unchanged');
  assert.ok(c.web.map((w) => w.name).includes((await k('exec', 'client-1', '--', 'sh', '-c', GET(c.clusterIP, 80))).trim()), 'node 1 still reaches the Service');
  t.diagnostic('node 2\'s agent stopped: node 1\'s table unchanged, node 2\'s table kept');

  // 6. Restarted, node 2 serves everything again; its agent adopted its routes, so the connection
  // opened before the stop carries its request now.
  await labAddNode(node2);
  assert.deepEqual(agentRoutes(ns2), [[cidrs[N1], ips[N1]]], 'node 2\'s route to node 1 is the one it had');
  assert.equal(await open.finish(), c.web[0]!.name, 'the connection opened before node 2\'s agent restarted is answered after it');
  await tableHolds(c, ns2);
  await checkFromPod(t, c, 'client-1', N1);
  await checkFromPod(t, c, 'client-2', N2);
  await checkFromHost(c);
  t.diagnostic(`all checks passed again after node 2's agent restarted; total ${Date.now() - started} ms`);

  // 7. NetworkPolicy across the nodes (docs/network.md): each agent checks its own pods.
  await checkPolicies(t, c, k, dir1);

  // 8. Node 2 leaves: node 1's agent deletes its route to it (the lab deletes none).
  await labRemoveNode(node2);
  await pollUntil('node 1\'s agent to drop the route to node 2', () => agentRoutes().length === 0, { timeoutMs: 30_000 });
});

/**
 * Default deny (ingress and egress) in `default`, then allow policies: the web pods on node 2 from
 * pods labelled role=allowed in namespaces labelled team=a (podSelector and namespaceSelector in
 * one peer), and those pods' egress to the web pods on 8080 only. client-1 on node 1 is blocked,
 * then let in (replies pass although both ends are isolated), reaches the ClusterIP, and is still
 * kept from anything else (node 2's NodePort); the web pods' readiness probes pass throughout.
 */
async function checkPolicies(t: TestContext, c: Cluster, k: Kubectl, dir: string): Promise<void> {
  const w = c.web[0]!;
  const fromClient1 = async (host: string, port: number) => (await k('exec', 'client-1', '--', 'sh', '-c', GET(host, port).replace('-w 5', '-w 2'))).trim();
  await k('label', 'namespace', 'default', 'team=a', '--overwrite');
  await k('label', 'pod', 'client-1', 'role=allowed', '--overwrite');
  const file = join(dir, 'policies.yaml');
  const np = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'default' }, spec });
  writeFileSync(file, toYaml(np('deny-all', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] })));
  const readySince = async () => JSON.parse(await k('get', 'pod', w.name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")]}')) as { status: string; lastTransitionTime: string };
  const before = await readySince();
  await k('apply', '-f', file);
  await pollUntil('default deny to block client-1 (node 1) → web pod (node 2)', async () => (await fromClient1(w.ip, 8080)) === '', { timeoutMs: 60_000 });
  // The connect attempts above took seconds, each a second's probe period: one failure would have flipped Ready.
  assert.deepEqual(await readySince(), before, 'the web pod stayed Ready under default deny (its node\'s probes pass)');
  writeFileSync(file, [
    np('web-from-allowed', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: { matchLabels: { role: 'allowed' } } }], ports: [{ port: 8080 }] }] }),
    np('allowed-to-web', { podSelector: { matchLabels: { role: 'allowed' } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port: 8080 }] }] }),
  ].map((d) => toYaml(d)).join('---\n'));
  await k('apply', '-f', file);
  await pollUntil('the allow policies to let client-1 reach the web pod', async () => (await fromClient1(w.ip, 8080)) === w.name, { timeoutMs: 60_000 });
  const names = c.web.map((x) => x.name);
  assert.ok(names.includes(await fromClient1(c.clusterIP, 80)), 'client-1 reaches the web Service by ClusterIP (checked against the endpoint)');
  assert.equal(await fromClient1(c.ips[N2]!, c.nodePort), '', 'client-1\'s egress is limited to the web pods: node 2\'s NodePort is blocked');
  assert.equal((await readySince()).status, 'True');
  await k('delete', 'networkpolicy', 'deny-all', 'web-from-allowed', 'allowed-to-web');
  t.diagnostic('NetworkPolicy across nodes: default deny, allow by pod and namespace selector, egress held, replies and probes pass');
}

/**
 * A TCP connection from `client` to `ip`:8080 (httpd) held open by `kubectl exec -i … nc`: the
 * request line goes now, the blank line that ends it goes in `finish`, which returns the body.
 * Returns once the pod's /proc/net/tcp shows the connection established.
 */
async function openConnection(kubeconfig: string, k: Kubectl, client: string, ip: string): Promise<{ finish(): Promise<string> }> {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'exec', '-i', client, '--', 'nc', ip, '8080'], { stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  child.stdin.write('GET / HTTP/1.0\r\n');
  // /proc/net/tcp: remote address as little-endian hex, port 8080 = 1F90, state 01 = ESTABLISHED.
  const remote = `${ip.split('.').reverse().map((o) => Number(o).toString(16).padStart(2, '0')).join('').toUpperCase()}:1F90`;
  await pollUntil(`${client}'s connection to ${ip}:8080 established`, async () =>
    (await k('exec', client, '--', 'cat', '/proc/net/tcp')).split('\n').some((l) => { const f = l.trim().split(/\s+/); return f[2] === remote && f[3] === '01'; }), { timeoutMs: 30_000 });
  return {
    async finish() {
      child.stdin.end('\r\n');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
      child.kill();
      return out.trim().split('\n').at(-1)?.trim() ?? '';
    },
  };
}
