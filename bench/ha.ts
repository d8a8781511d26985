// Agent fail-over time (issue #17): two `nodelet server` processes on one etcd (shared PKI and
// admin certificate), an ApiClient given both URLs, as the agent is with --api-servers. Each round
// SIGKILLs the server the client is using and measures kill → the client's next successful
// write (writes are retried at once on failure, as a status loop would). The killed server is
// then restarted so that both are up for the next round. Baseline, same run: the same client
// with ONE server, which is SIGKILLed and restarted at once; kill → next successful write.
//
//   node --conditions=source --import tsx bench/ha.ts [--kills 10] [--leader-kills 10] [--source] [--svg] [--json]
//
// Then leader fail-over (bench/ha-leader.ts): kill -9 of the server leading the scheduler and
// controller manager → the standby holds both Leases, and → it binds its first pod; beside a
// graceful stop of the leader (Leases released), in the same run.
//
// --source runs the servers from the TypeScript sources (bin/nodelet-dev) instead of dist/
// (build first: npx tsc -b). Writes bench/results/ha.json (bench/lib/results.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiClient, CONFIGMAPS } from '@nodelet/api';
import { freePort } from '@nodelet/base/testing';
import { startTestEtcd } from '../control-plane/src/storage/testing/etcd.js';
import { measureLeaderFailover } from './ha-leader.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { ServerProcess, startServerPair } from './lib/server-process.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    kills: { type: 'string', default: '10' },
    'leader-kills': { type: 'string', default: '10' },
    source: { type: 'boolean', default: false },
    svg: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const KILLS = Number(args.kills);
const LEADER_KILLS = Number(args['leader-kills']);

let seq = 0;
/** Writes until one succeeds; returns when it did. */
async function nextWrite(client: ApiClient): Promise<void> {
  for (;;) {
    try {
      await client.create(CONFIGMAPS, { metadata: { name: `ha-${process.pid}-${seq++}`, namespace: 'default' } });
      return;
    } catch {
      // The server is gone or not back yet: the next attempt is the measurement's next try.
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function main(): Promise<void> {
  const etcd = await startTestEtcd();
  const root = await mkdtemp(join(tmpdir(), 'nodelet-bench-ha-'));
  const servers: ServerProcess[] = [];
  const clients: ApiClient[] = [];
  try {
    const [pa, pb] = [await freePort(), await freePort()];
    const a = new ServerProcess({ dataDir: join(root, 'a'), port: pa, etcd: etcd.endpoint, source: args.source });
    const b = new ServerProcess({ dataDir: join(root, 'b'), port: pb, etcd: etcd.endpoint, source: args.source });
    servers.push(a, b);
    const admin = await startServerPair(a, b);
    const byUrl = new Map(servers.map((s) => [`${s.url}/`, s]));

    // 1. Fail-over: kill the server in use, time the next write, bring it back.
    const failover: number[] = [];
    const ha = new ApiClient({ server: a.url, servers: [b.url], ...admin, timeoutMs: 5_000, probeIntervalMs: 1_000 });
    clients.push(ha);
    for (let i = 0; i < KILLS; i++) {
      await nextWrite(ha);
      const victim = byUrl.get(ha.server)!;
      const t0 = performance.now();
      await victim.kill();
      await nextWrite(ha);
      failover.push(performance.now() - t0);
      await victim.start();
    }

    // 2. Baseline: one server, killed and restarted at once.
    const restart: number[] = [];
    const single = new ApiClient({ server: a.url, ...admin, timeoutMs: 5_000 });
    clients.push(single);
    for (let i = 0; i < KILLS; i++) {
      await nextWrite(single);
      const t0 = performance.now();
      await a.kill();
      const back = a.start();
      await nextWrite(single);
      restart.push(performance.now() - t0);
      await back;
    }

    for (const s of servers) await s.stop();

    // 3. Leader fail-over: kill -9 of the leading server vs a graceful stop (Leases released).
    const log = (line: string): void => void (args.json || console.error(line));
    const leaderKill = await measureLeaderFailover({ etcd: etcd.endpoint, root, source: args.source, kills: LEADER_KILLS, how: 'kill', log });
    const leaderStop = await measureLeaderFailover({ etcd: etcd.endpoint, root, source: args.source, kills: LEADER_KILLS, how: 'stop', log });

    const group = 'server death → the agent\'s next write';
    const lgroup = 'leader death → the new leader';
    const figures: BenchFigure[] = [
      { group, name: 'fail-over p50', unit: 'ms', value: percentile(failover, 50), baseline: { label: 'one server restarted', value: percentile(restart, 50) } },
      { group, name: 'fail-over p99', unit: 'ms', value: percentile(failover, 99), baseline: { label: 'one server restarted', value: percentile(restart, 99) } },
      { group: lgroup, name: 'both Leases held, p50', unit: 'ms', value: percentile(leaderKill.takeoverMs, 50), baseline: { label: 'graceful stop', value: percentile(leaderStop.takeoverMs, 50) }, target: { op: '<=', value: 20_000 } },
      { group: lgroup, name: 'both Leases held, p99', unit: 'ms', value: percentile(leaderKill.takeoverMs, 99), baseline: { label: 'graceful stop', value: percentile(leaderStop.takeoverMs, 99) }, target: { op: '<=', value: 20_000 } },
      { group: lgroup, name: 'first binding, p50', unit: 'ms', value: percentile(leaderKill.firstActionMs, 50), baseline: { label: 'graceful stop', value: percentile(leaderStop.firstActionMs, 50) } },
      { group: lgroup, name: 'first binding, p99', unit: 'ms', value: percentile(leaderKill.firstActionMs, 99), baseline: { label: 'graceful stop', value: percentile(leaderStop.firstActionMs, 99) } },
    ];
    const written = writeBenchResults('ha', figures, {
      details: { kills: KILLS, failoverMs: failover, restartMs: restart, leaderKills: LEADER_KILLS, leaderKill, leaderStop, servers: args.source ? 'source' : 'dist' },
      svg: args.svg,
    });
    if (args.json) {
      console.log(JSON.stringify({ failover, restart, leaderKill, leaderStop }));
      return;
    }
    console.log(`kill -9 of the server in use → next successful write, ${KILLS} kills each`);
    console.log(`${'case'.padEnd(36)}${'p50'.padStart(10)}${'p99'.padStart(10)}`);
    console.log(`${'2 servers, client fails over'.padEnd(36)}${percentile(failover, 50).toFixed(0).padStart(8)}ms${percentile(failover, 99).toFixed(0).padStart(8)}ms`);
    console.log(`${'baseline: 1 server, restarted'.padEnd(36)}${percentile(restart, 50).toFixed(0).padStart(8)}ms${percentile(restart, 99).toFixed(0).padStart(8)}ms`);
    console.log(`\nleader death → standby holds both Leases / binds its first pod, ${LEADER_KILLS} rounds each`);
    console.log(`${'kill -9 of the leader'.padEnd(36)}${percentile(leaderKill.takeoverMs, 50).toFixed(0).padStart(8)}ms${percentile(leaderKill.takeoverMs, 99).toFixed(0).padStart(8)}ms / ${percentile(leaderKill.firstActionMs, 50).toFixed(0)}ms ${percentile(leaderKill.firstActionMs, 99).toFixed(0)}ms`);
    console.log(`${'baseline: graceful stop'.padEnd(36)}${percentile(leaderStop.takeoverMs, 50).toFixed(0).padStart(8)}ms${percentile(leaderStop.takeoverMs, 99).toFixed(0).padStart(8)}ms / ${percentile(leaderStop.firstActionMs, 50).toFixed(0)}ms ${percentile(leaderStop.firstActionMs, 99).toFixed(0)}ms`);
    for (const line of written.targetLines) console.log(line);
    console.log(`\nwritten to ${written.json}${written.svg ? ` and ${written.svg}` : ''}`);
  } finally {
    for (const c of clients) c.close();
    for (const s of servers) await s.stop();
    await etcd.stop();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
