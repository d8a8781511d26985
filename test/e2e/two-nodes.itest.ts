// nodelet-test: long — the two-node ground (spreading, Services across nodes) runs by default in
// two-nodes-services.itest.ts and workloads.itest.ts; this file adds the NotReady → eviction path.
// Two agents on one machine, one server: the first node comes from the quickstart code path
// (`labUp`), the second from `labAddNode` with its own lab containerd (root, state, socket), CNI
// dirs, bridge and ports, joined with a fresh bootstrap token. Both nodes share the host network
// namespace; their bridges (nlt0, nlt1) and the per-node pod CIDRs from the IPAM controller keep
// the pod networks apart. A 6-replica deployment spreads over both nodes; SIGTERM to node 2's
// agent turns the node NotReady once the (shortened) node-monitor grace period passes, and after
// the pods' NoExecute tolerationSeconds they are evicted and recreated on node 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { labAddNode, labDown, labPaths, labRemoveNode, labUp, runningPid, stopProcess } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { connectCriClient } from '@nodelet/cri-client';
import { stringify as toYaml } from 'yaml';
import { inCidr, kubectl } from './helpers.js';
import { cleanups, freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const CLUSTER_CIDR = '10.237.0.0/16';
const GRACE_S = 20;
const TOLERATION_S = 5;

interface PodRow {
  name: string;
  phase: string;
  ip: string;
  node: string;
  deleting: boolean;
}

/**
 * The pod network the host holds that this test's nodes could have made: addresses of the cluster
 * CIDR on any device (the VXLAN device holds the node's pod gateway) and the masquerade chains of
 * its CIDR and of the default one (node 2 is added without a cluster CIDR and so is given the
 * default; a regression once left a chain of it).
 */
function hostPodNetwork(): string[] {
  const addrs = JSON.parse(spawnSync('ip', ['-json', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout || '[]') as Array<{ ifname: string; addr_info?: Array<{ local: string }> }>;
  const held = addrs.flatMap((l) => (l.addr_info ?? []).filter((a) => inCidr(a.local, CLUSTER_CIDR)).map((a) => `${l.ifname} ${a.local}`));
  const masq = spawnSync('nft', ['-j', 'list', 'table', 'ip', 'nodelet-pod-network'], { encoding: 'utf8' });
  const chains = masq.status === 0 ? (JSON.parse(masq.stdout) as { nftables: Array<{ chain?: { name: string } }> }).nftables.flatMap((o) => (o.chain ? [o.chain.name] : [])) : [];
  return [...held, ...chains.filter((c) => ['masq-10-237-0-0-16', 'masq-10-244-0-0-16'].includes(c)).map((c) => `chain ${c}`)];
}

test('two agents on one machine: a deployment spreads over both nodes; a stopped node goes NotReady and its pods move', async (t) => {
  if (!requireRoot(t)) return;
  const cleanup = cleanups(t);
  const started = Date.now();
  const dir1 = mkdtempSync(join(tmpdir(), 'nodelet-e2e-two-nodes-1-'));
  const dir2 = mkdtempSync(join(tmpdir(), 'nodelet-e2e-two-nodes-2-'));
  const [apiPort, regPort, api1, hz1, api2, hz2] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const registry = `127.0.0.1:${regPort}`;
  const lab = {
    stateDir: dir1, apiPort, registry, clusterCidr: CLUSTER_CIDR, bridge: 'nlt0', nodeName: 'two-node-1',
    nodeApiPort: api1, healthzPort: hz1, serverArgs: ['--node-monitor-grace-period', `${GRACE_S}s`],
  };
  const node2 = {
    stateDir: dir2, adminKubeconfig: join(dir1, 'server', 'admin.kubeconfig'), registry, nodeName: 'two-node-2', bridge: 'nlt1',
    nodeApiPort: api2, healthzPort: hz2,
  };
  // What of the pod network the host held before the test (a lab of someone else's) is not its to remove.
  const before = new Set(hostPodNetwork());
  // Node 2 goes first (its agent still serves CNI DEL for its sandboxes), then node 1 and the server.
  cleanup(async () => {
    try {
      const r = await labRemoveNode(node2);
      if (r.problems.length) t.diagnostic(`node 2 cleanup: ${r.problems.join('; ')}`);
    } finally {
      rmSync(dir2, { recursive: true, force: true });
      const r1 = await labDown(lab);
      if (r1.problems.length) t.diagnostic(`node 1 cleanup: ${r1.problems.join('; ')}`);
      rmSync(dir1, { recursive: true, force: true });
    }
    // The agents' pod network on the host (one route manager per namespace: node 1's) is gone too.
    assert.deepEqual(hostPodNetwork().filter((x) => !before.has(x)), [], 'the lab left its pod network on the host');
  });
  const up = await labUp(lab);
  assert.equal(up.kubeconfig, node2.adminKubeconfig);
  const n2 = await labAddNode(node2);
  t.diagnostic(`two nodes Ready after ${Date.now() - started} ms`);
  const k = kubectl(up.kubeconfig);

  // Two nodes, each with its own pod CIDR from the cluster CIDR.
  const cidrs = new Map<string, string>();
  for (const n of ['two-node-1', 'two-node-2']) {
    const c = (await k('get', 'node', n, '-o', 'jsonpath={.spec.podCIDR}')).trim();
    assert.ok(c && inCidr(c.split('/')[0]!, CLUSTER_CIDR), `node ${n} podCIDR "${c}" is not from ${CLUSTER_CIDR}`);
    cidrs.set(n, c);
  }
  assert.notEqual(cidrs.get('two-node-1'), cidrs.get('two-node-2'), 'the nodes share a pod CIDR');

  // Six replicas that tolerate an unreachable / not-ready node for only TOLERATION_S seconds.
  const manifest = join(dir1, 'spread.yaml');
  const toleration = (key: string) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_S });
  writeFileSync(manifest, toYaml({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'spread', namespace: 'default' },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: 'spread' } },
      template: {
        metadata: { labels: { app: 'spread' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          tolerations: [toleration('node.kubernetes.io/unreachable'), toleration('node.kubernetes.io/not-ready')],
          containers: [{ name: 'httpd', image: up.images.busybox, command: ['httpd', '-f', '-p', '8080'] }],
        },
      },
    },
  }));
  await k('apply', '-f', manifest);

  const pods = async (): Promise<PodRow[]> => {
    const list = JSON.parse(await k('get', 'pods', '-l', 'app=spread', '-o', 'json')) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string; podIP?: string }; spec: { nodeName?: string } }> };
    return list.items.map((p) => ({ name: p.metadata.name, phase: p.status.phase ?? '', ip: p.status.podIP ?? '', node: p.spec.nodeName ?? '', deleting: !!p.metadata.deletionTimestamp }));
  };
  const perNode = (ps: PodRow[]) => Object.fromEntries([...cidrs.keys()].map((n) => [n, ps.filter((p) => p.node === n).length]));

  const spread = await pollUntil('6 running spread pods', async () => {
    const ps = (await pods()).filter((p) => !p.deleting);
    return ps.length === 6 && ps.every((p) => p.phase === 'Running' && p.ip) ? ps : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  t.diagnostic(`6 pods Running after ${Date.now() - started} ms, per node ${JSON.stringify(perNode(spread))}`);
  for (const p of spread) assert.ok(inCidr(p.ip, cidrs.get(p.node)!), `pod ${p.name} IP ${p.ip} is outside ${p.node}'s CIDR ${cidrs.get(p.node)}`);
  const counts = perNode(spread);
  assert.ok(counts['two-node-1']! >= 2 && counts['two-node-2']! >= 2, `pods are not spread over both nodes: ${JSON.stringify(counts)}`);
  const onNode2 = new Set(spread.filter((p) => p.node === 'two-node-2').map((p) => p.name));

  // Stop node 2's agent (SIGTERM by its PID); its containers keep running, as with a dead kubelet.
  const agent2 = labPaths(dir2).agentProc;
  assert.ok(await runningPid(agent2, dir2), 'node 2 agent is not running');
  const stoppedAt = Date.now();
  assert.ok(await stopProcess(agent2, dir2), 'node 2 agent was not running when stopped');

  await pollUntil('node two-node-2 to turn NotReady', async () => {
    const ready = (await k('get', 'node', 'two-node-2', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).trim();
    return ready !== 'True' ? ready : undefined;
  }, { timeoutMs: (GRACE_S + 30) * 1_000, intervalMs: 250 });
  const notReadyMs = Date.now() - stoppedAt;
  assert.match(await k('get', 'node', 'two-node-2', '--no-headers'), /NotReady/);
  const taints = await k('get', 'node', 'two-node-2', '-o', 'jsonpath={.spec.taints[*].key}');
  assert.match(taints, /node\.kubernetes\.io\/(unreachable|not-ready)/);
  t.diagnostic(`node 2 NotReady ${notReadyMs} ms after its agent stopped (grace ${GRACE_S} s), taints: ${taints}`);

  const moved = await pollUntil('all 6 spread pods Running on two-node-1', async () => {
    const ps = (await pods()).filter((p) => !p.deleting);
    return ps.length === 6 && ps.every((p) => p.phase === 'Running' && p.node === 'two-node-1' && p.ip) ? ps : undefined;
  }, { timeoutMs: 90_000, intervalMs: 250 });
  t.diagnostic(`pods recreated on node 1 ${Date.now() - stoppedAt} ms after the agent stopped (toleration ${TOLERATION_S} s); total ${Date.now() - started} ms`);
  assert.ok(moved.every((p) => !onNode2.has(p.name)), 'a pod of node 2 was reported on node 1');
  for (const p of moved) assert.ok(inCidr(p.ip, cidrs.get('two-node-1')!), `pod ${p.name} IP ${p.ip} is outside node 1's CIDR`);
  assert.equal(new Set(moved.map((p) => p.ip)).size, 6, 'pod IPs must be distinct');


  // Restarting the agent brings node 2 back; it finishes the evicted pods and frees their sandboxes.
  await labAddNode(node2);
  const { client: cri2 } = await connectCriClient({ endpoint: n2.runtimeEndpoint });
  cleanup(() => cri2.close());
  await pollUntil('node 2 to release the sandboxes of its evicted pods', async () => {
    const left = (await pods()).filter((p) => p.node === 'two-node-2');
    const sandboxes = (await cri2.runtime.listPodSandbox({})).items ?? [];
    return left.length === 0 && sandboxes.length === 0 ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  t.diagnostic(`node 2 back and clean ${Date.now() - stoppedAt} ms after its agent stopped`);
  await k('delete', 'deployment', 'spread', '--wait=false');
});
