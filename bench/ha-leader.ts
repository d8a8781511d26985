/**
 * Leader fail-over for bench/ha.ts (issue #17): two `nodelet server` processes with controllers
 * and leader election on one etcd. Each round SIGKILLs the server holding the kube-scheduler
 * Lease, creates a pod through the other one at once, and times, from the kill:
 *   - takeover: both kube-system Leases (kube-scheduler, kube-controller-manager) held by the standby;
 *   - first action: the new leader's scheduler binds that pod (spec.nodeName set).
 * The killed server is restarted (it stands by) before the next round. A Lease lasts 15 s and a
 * standby retries every 2–2.4 s, so a round takes about 15–18 s of waiting: what a kill costs.
 * With `how: 'stop'` (the baseline) the leader gets SIGTERM instead and releases its Leases on
 * the way out, as a server stopped for maintenance does.
 */
import { join } from 'node:path';
import { ApiClient, LEASES, NODES, PODS, type Lease, type Node } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { ServerProcess, startServerPair } from './lib/server-process.js';

export interface LeaderFailover {
  /** Kill → the standby holds both Leases, per round (ms). */
  takeoverMs: number[];
  /** Kill → a pod created after the kill is bound by the new leader, per round (ms). */
  firstActionMs: number[];
}

const LEASE_NAMES = ['kube-scheduler', 'kube-controller-manager'];
const NODE_NAME = 'bench-ha-node';

async function holders(client: ApiClient): Promise<Array<string | undefined>> {
  return Promise.all(LEASE_NAMES.map(async (n) => (await client.get<Lease>(LEASES, n, { namespace: 'kube-system' }).catch(() => undefined))?.spec?.holderIdentity));
}

/** A node the scheduler may bind to: no agent behind it, so the pod tolerates the taints the node controller will put on it. */
async function benchNode(client: ApiClient): Promise<void> {
  const node: Node = { metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME } }, spec: {} };
  await client.create(NODES, node);
  await client.patch(NODES, NODE_NAME, {
    status: { allocatable: { cpu: '100', memory: '100Gi', pods: '1000' }, capacity: { cpu: '100', memory: '100Gi', pods: '1000' }, conditions: [{ type: 'Ready', status: 'True' }] },
  }, { type: 'merge', subresource: 'status' });
}

export async function measureLeaderFailover(o: { etcd: string; root: string; source: boolean; kills: number; how: 'kill' | 'stop'; log: (line: string) => void }): Promise<LeaderFailover> {
  const flags = ['--leader-elect', '--log-level=info'];
  const [pc, pd] = [await freePort(), await freePort()];
  const c = new ServerProcess({ dataDir: join(o.root, `${o.how}-c`), port: pc, etcd: o.etcd, source: o.source, flags });
  const d = new ServerProcess({ dataDir: join(o.root, `${o.how}-d`), port: pd, etcd: o.etcd, source: o.source, flags });
  const servers = [c, d];
  const clients = new Map<ServerProcess, ApiClient>();
  const out: LeaderFailover = { takeoverMs: [], firstActionMs: [] };
  try {
    const admin = await startServerPair(c, d);
    for (const s of servers) clients.set(s, new ApiClient({ server: s.url, ...admin, timeoutMs: 5_000 }));
    await benchNode(clients.get(c)!).catch((err: unknown) => {
      if (!String(err).includes('already exists')) throw err; // the other mode's run made it
    });

    for (let i = 0; i < o.kills; i++) {
      const leader = await pollUntil('one server holding both leases', async () => {
        const h = await holders(clients.get(c)!);
        return servers.find((s) => s.running && h.every((x) => x === s.leaderIdentity));
      }, { timeoutMs: 60_000, intervalMs: 200 });
      const standby = servers.find((s) => s !== leader)!;
      const api = clients.get(standby)!;
      const t0 = performance.now();
      await (o.how === 'kill' ? leader.kill() : leader.stop());
      const pod = await api.create(PODS, {
        metadata: { generateName: 'ha-leader-', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'bench' }], tolerations: [{ operator: 'Exists' }] },
      });
      let took: number | undefined;
      let bound: number | undefined;
      await pollUntil('the standby leading and the pod bound', async () => {
        if (took === undefined && (await holders(api)).every((x) => x === standby.leaderIdentity)) took = performance.now() - t0;
        if (bound === undefined && (await api.get(PODS, pod.metadata.name!, { namespace: 'default' })).spec?.nodeName) bound = performance.now() - t0;
        return took !== undefined && bound !== undefined;
      }, { timeoutMs: 60_000, intervalMs: 50 });
      out.takeoverMs.push(took!);
      out.firstActionMs.push(bound!);
      o.log(`  leader ${o.how} ${i + 1}/${o.kills}: takeover ${took!.toFixed(0)} ms, first binding ${bound!.toFixed(0)} ms`);
      await api.delete(PODS, pod.metadata.name!, { namespace: 'default', gracePeriodSeconds: 0 });
      await leader.start();
    }
    return out;
  } finally {
    for (const cl of clients.values()) cl.close();
    for (const s of servers) await s.stop();
  }
}
