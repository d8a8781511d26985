// nodelet-test: long — the capstone of docs/ha.md (about 90 s); its parts run by default in
// control-plane/test/integration/{ha-servers,api-failover,etcd-cluster,etcd-snapshot}.itest.ts.
//
// A highly available control plane under faults, end to end: 3 etcd members (TLS) and 2 `nodelet
// server` processes on them, one agent with real containerd given both servers (`apiServers`).
//
//   Deployment of 10 pods Running
//   kill -9 server A (the agent's, leading both Leases) ─▶ the node Lease keeps being renewed
//       (seen through B), the pods keep their containers, B takes kube-scheduler and
//       kube-controller-manager within 20 s, a scale to 20 completes
//   kill -9 the etcd raft leader under ConfigMap creates through B ─▶ writes go on; every
//       acknowledged create is there at the end (ledger)
//   snapshot save ─▶ restore into a fresh single etcd ─▶ a server on it serves the Deployment (20)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { ApiClient, loadKubeconfig, CONFIGMAPS, DEPLOYMENTS, LEASES, NAMESPACES, NODES, PODS, type Deployment, type Lease, type Node, type Pod } from '@nodelet/api';
import { hasCode, noopLogger, pollUntil } from '@nodelet/base';
import { copyClusterSecrets, ETCD_BINARY, freePort, startEtcdMember, startServerProcess, type ServerProcess } from '@nodelet/base/testing';
import { labDown, labPaths, labUp, runningPid } from '@nodelet/cli';
import { requireRoot, unmountUnder } from '@nodelet/lab-runtime/testing';
import { startControlPlane } from '../../control-plane/src/control-plane.js';
import { etcdMemberStatuses } from '../../control-plane/src/storage/index.js';
import { startTestEtcdCluster, type TestEtcdCluster } from '../../control-plane/src/storage/testing/etcd-cluster.js';

const NODELET = join(import.meta.dirname, '../../bin/nodelet-dev');
const ETCDCTL = process.env.NODELET_ETCDCTL ?? '/usr/bin/etcdctl';
const CLUSTER_CIDR = '10.246.0.0/16';
const NODE = 'ha-node';
const NS = 'ha';
const run = promisify(execFile);

const skip = ((): string | false => {
  let reason: string | undefined;
  requireRoot({ skip: (m?: string) => void (reason = m ?? 'requirements missing') });
  if (!reason && !existsSync(ETCD_BINARY)) reason = `${ETCD_BINARY} not found (apt-get install etcd-server)`;
  if (!reason && !existsSync(ETCDCTL)) reason = `${ETCDCTL} not found (apt-get install etcd-client): restore runs etcdctl`;
  return reason ?? false;
})();

const LEADER_LEASES = ['kube-scheduler', 'kube-controller-manager'];

async function holders(client: ApiClient): Promise<Array<string | undefined>> {
  return Promise.all(LEADER_LEASES.map((name) => client.get<Lease>(LEASES, name, { namespace: 'kube-system' }).then((l) => l.spec?.holderIdentity, () => undefined)));
}

/** Pod name → its container's ID and restart count, for the Running pods of the Deployment. */
async function runningPods(client: ApiClient): Promise<Map<string, { containerID: string; restartCount: number }>> {
  const pods = (await client.list<Pod>(PODS, { namespace: NS, labelSelector: 'app=web' })).items;
  const out = new Map<string, { containerID: string; restartCount: number }>();
  for (const p of pods) {
    const c = p.status?.containerStatuses?.[0];
    if (p.status?.phase === 'Running' && !p.metadata.deletionTimestamp && c?.containerID && c.state?.running) {
      out.set(p.metadata.name!, { containerID: c.containerID, restartCount: c.restartCount ?? 0 });
    }
  }
  return out;
}

test('HA control plane: server kill -9 → agent fail-over and leader take-over; etcd member kill -9 loses no acked write; snapshot restores the cluster', { skip, timeout: 900_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-e2e-ha-'));
  const labDir = join(dir, 'lab');
  const cleanups: Array<[string, () => Promise<unknown>]> = [];
  // Cleanup in reverse order of start, each step on its own, problems logged, never thrown.
  t.after(async () => {
    for (const [what, step] of cleanups.reverse()) {
      try {
        const r = await step();
        const problems = (r as { problems?: string[] } | undefined)?.problems;
        if (problems?.length) t.diagnostic(`${what} cleanup: ${problems.join('; ')}`);
      } catch (err) {
        t.diagnostic(`${what} cleanup failed: ${String(err)}`);
      }
    }
  });
  cleanups.push(['temp dir', () => rm(dir, { recursive: true, force: true })]);

  // 1. Three etcd members with TLS; server A is the lab's (with the registry), B joins with A's secrets.
  const etcd: TestEtcdCluster = await startTestEtcdCluster();
  cleanups.push(['etcd cluster', () => etcd.stop()]);
  const etcdArgs = [
    '--datastore-endpoint', `etcd://${etcd.endpoints.map((u) => new URL(u).host).join(',')}`,
    '--etcd-cafile', etcd.tls.caFile, '--etcd-certfile', etcd.tls.certFile, '--etcd-keyfile', etcd.tls.keyFile,
  ];
  const [apiPort, regPort, nodeApiPort, healthzPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const urlA = `https://127.0.0.1:${apiPort}`;
  // Same port on another loopback address, as a server on another machine (docs/ha.md: one port).
  const urlB = `https://127.0.0.2:${apiPort}`;
  const lab = {
    stateDir: labDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: CLUSTER_CIDR, bridge: 'nle-ha0', nodeName: NODE,
    nodeApiPort, healthzPort, proxyMode: 'none' as const, serverArgs: etcdArgs,
    agentConfig: { apiServers: [urlA, urlB] },
  };
  const p = labPaths(labDir);
  cleanups.push(['lab', async () => {
    const r = await labDown({ ...lab, keepState: true });
    await unmountUnder(labDir);
    return r;
  }]);
  await labUp(lab);
  const pidA = await runningPid(p.serverProc, labDir);
  assert.ok(pidA, 'server A runs');
  // A's admin.kubeconfig (a client certificate of the shared CA) is the admin on both servers.
  const admin = await loadKubeconfig(p.adminKubeconfig);
  const clientA = new ApiClient({ ...admin, server: urlA, servers: [], timeoutMs: 10_000 });
  cleanups.push(['client A', async () => clientA.close()]);
  await pollUntil('A leads both leases', async () => (await holders(clientA)).every((h) => h !== undefined), { timeoutMs: 30_000 });
  const leadersA = await holders(clientA);

  // What `nodelet install server --join` copies: the CA, its key, the service-account key.
  const dirB = join(dir, 'server-b');
  await copyClusterSecrets(p.server, dirB);
  // The lab encrypts Secrets at rest: every server on the etcd needs the same keys (docs/ha.md),
  // or B cannot read the node's credential, nor any other Secret.
  const encryption = join(dirB, 'encryption-config.yaml');
  await copyFile(join(p.server, 'encryption-config.yaml'), encryption);
  const b: ServerProcess = await startServerProcess({ dataDir: dirB, bindAddress: '127.0.0.2', port: apiPort, args: [...etcdArgs, '--cluster-cidr', CLUSTER_CIDR, '--encryption-provider-config', encryption] });
  cleanups.push(['server B', () => b.stop()]);
  const clientB = new ApiClient({ ...admin, server: urlB, servers: [], timeoutMs: 10_000 });
  cleanups.push(['client B', async () => clientB.close()]);
  assert.deepEqual(await holders(clientB), leadersA, 'B stands by: A still leads both');
  assert.ok(!leadersA.includes(b.leaderIdentity));

  // 2. A Deployment of 10 pods, all Running on the node (the image is the lab registry's, already pulled for 20).
  await clientA.create(NAMESPACES, { metadata: { name: NS } });
  const image = `${lab.registry}/busybox:latest`;
  await clientA.create(DEPLOYMENTS, {
    metadata: { name: 'web', namespace: NS },
    spec: {
      replicas: 10, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        // IfNotPresent: the registry lives in server A, which dies below.
        spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
      },
    },
  });
  const before = await pollUntil('10 pods Running', async () => {
    const pods = await runningPods(clientA);
    return pods.size === 10 ? pods : undefined;
  }, { timeoutMs: 180_000, intervalMs: 500 });

  // 3. kill -9 of server A, the one the agent talks to and the leader of both leases.
  const leaseOf = async (c: ApiClient): Promise<string | undefined> => (await c.get<Lease>(LEASES, NODE, { namespace: 'kube-node-lease' })).spec?.renewTime;
  const renewBefore = await leaseOf(clientB);
  process.kill(pidA, 'SIGKILL');
  const killedAt = Date.now();
  await pollUntil('server A gone', async () => (await runningPid(p.serverProc, labDir)) === undefined, { timeoutMs: 10_000, intervalMs: 100 });

  // 3a. The agent fails over: its node Lease is renewed twice more, through B (renewals every 10 s).
  const renewAfter = await pollUntil('node lease renewed after the kill', async () => {
    const r = await leaseOf(clientB);
    return r !== undefined && r !== renewBefore && Date.parse(r) > killedAt ? r : undefined;
  }, { timeoutMs: 40_000, intervalMs: 500 });
  await pollUntil('node lease renewed again', async () => {
    const r = await leaseOf(clientB);
    return r !== undefined && Date.parse(r) > Date.parse(renewAfter);
  }, { timeoutMs: 40_000, intervalMs: 500 });
  const failoverMs = Date.parse(renewAfter) - killedAt;

  // 3b. The standby takes both leases within 20 s.
  await pollUntil('B leads both', async () => (await holders(clientB)).every((h) => h === b.leaderIdentity), { timeoutMs: 30_000, intervalMs: 200 });
  // Timed by the leases' acquireTime (written by B as it took each), not by this poll's latency.
  const taken = await Promise.all(LEADER_LEASES.map((name) => clientB.get<Lease>(LEASES, name, { namespace: 'kube-system' })));
  const takeoverMs = Math.max(...taken.map((l) => Date.parse(String(l.spec?.acquireTime)))) - killedAt;
  assert.ok(takeoverMs < 20_000, `B took the leases ${takeoverMs} ms after the kill`);

  // 3c. The pods kept running: the same containers, no restart.
  const kept = await runningPods(clientB);
  assert.deepEqual([...kept].sort(), [...before].sort(), 'the same 10 pods run the same containers');
  assert.ok([...kept.values()].every((c) => c.restartCount === 0));

  // 3d. A scale to 20 completes (B's scheduler and controllers, the agent through B).
  await clientB.patch(DEPLOYMENTS, 'web', { spec: { replicas: 20 } }, { type: 'merge', namespace: NS, subresource: 'scale' });
  const scaled = await pollUntil('20 pods Running', async () => {
    const pods = await runningPods(clientB);
    return pods.size === 20 ? pods : undefined;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  for (const [name, c] of before) assert.equal(scaled.get(name)?.containerID, c.containerID, `${name} kept its container`);
  // The node stayed Ready under B's node lifecycle controller: its Lease kept coming through B.
  const node = await clientB.get<Node>(NODES, NODE);
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', 'the node is still Ready');
  t.diagnostic(`server kill -9: agent's first node lease renewal through B after ${failoverMs} ms; leases taken after ${takeoverMs} ms`);

  // 4. kill -9 of the etcd raft leader under ConfigMap creates through B: a ledger of acked creates.
  const statuses = await etcdMemberStatuses({ endpoints: etcd.endpoints, tls: { ca: etcd.tls.ca, cert: etcd.tls.cert, key: etcd.tls.key } });
  const leader = statuses.findIndex((s) => s.ok && s.isLeader);
  assert.ok(leader >= 0, `an etcd leader among ${JSON.stringify(statuses)}`);
  const ledger = new Map<string, string>();
  const failures: string[] = [];
  let stop = false;
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const name = `ledger-${w}-${i}`;
      try {
        const cm = await clientB.create(CONFIGMAPS, { metadata: { name, namespace: NS }, data: { w: String(w), i: String(i) } });
        ledger.set(name, cm.metadata.uid!);
      } catch (err) {
        // A create that failed may or may not have applied: not in the ledger, and its name is not reused.
        if (hasCode(err, 'ERR_INVALID_ARGUMENT') || hasCode(err, 'ERR_NOT_FOUND')) throw err;
        failures.push(String(err));
      }
    }
  };
  const writers = Promise.all([0, 1, 2, 3].map(writer));
  try {
    await pollUntil('50 acked creates', () => ledger.size >= 50, { timeoutMs: 60_000, intervalMs: 50 });
    await etcd.kill(leader);
    const atKill = ledger.size;
    await pollUntil('100 acked creates after the member kill', () => ledger.size >= atKill + 100, { timeoutMs: 60_000, intervalMs: 50 });
  } finally {
    stop = true;
    await writers;
  }
  const stored = new Map((await clientB.list(CONFIGMAPS, { namespace: NS })).items.map((c) => [c.metadata.name!, c.metadata.uid!]));
  const lost = [...ledger].filter(([name, uid]) => stored.get(name) !== uid);
  assert.deepEqual(lost, [], `acknowledged creates lost (of ${ledger.size}; ${failures.length} failed)`);
  t.diagnostic(`etcd member kill -9: ${ledger.size} acked creates, ${failures.length} failed, none lost`);
  await etcd.start(leader);

  // 5. A snapshot restored into a fresh single etcd brings the cluster back.
  const tlsFlags = [`--endpoints=${etcd.endpoints.map((u) => new URL(u).host).join(',')}`, `--cacert=${etcd.tls.caFile}`, `--cert=${etcd.tls.certFile}`, `--key=${etcd.tls.keyFile}`];
  const snap = join(dir, 'backup.db');
  await run(NODELET, ['etcd', 'snapshot', 'save', snap, ...tlsFlags], { timeout: 60_000 });
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const peer = `http://127.0.0.1:${peerPort}`;
  const restoredDir = join(dir, 'restored-etcd');
  await run(NODELET, ['etcd', 'snapshot', 'restore', snap, `--data-dir=${restoredDir}`, '--name=restored', `--initial-cluster=restored=${peer}`, `--initial-advertise-peer-urls=${peer}`], { timeout: 60_000 });
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  // The restored data holds its cluster: no --initial-cluster.
  const restored = await startEtcdMember({ name: 'restored', dataDir: restoredDir, clientUrl, peerUrl: peer, initialCluster: false });
  cleanups.push(['restored etcd', () => restored.stop()]);
  const cp = await startControlPlane({ dataDir: join(dir, 'server-restored'), datastoreEndpoint: clientUrl, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  cleanups.push(['restored server', () => cp.close()]);
  const clientR = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanups.push(['restored client', async () => clientR.close()]);
  const d = await clientR.get<Deployment>(DEPLOYMENTS, 'web', { namespace: NS });
  assert.equal(d.spec?.replicas, 20);
  assert.equal((await clientR.list<Pod>(PODS, { namespace: NS, labelSelector: 'app=web' })).items.length, 20);
  assert.ok((await clientR.get<Node>(NODES, NODE)).metadata.uid);
  const back = new Set((await clientR.list(CONFIGMAPS, { namespace: NS })).items.map((c) => c.metadata.name));
  assert.deepEqual([...ledger.keys()].filter((n) => !back.has(n)), [], 'every acked create is in the snapshot');
});
