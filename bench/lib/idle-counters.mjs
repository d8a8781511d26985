// Preload that counts an agent's work items, for bench/agent-footprint.ts runs on a shared machine
// where CPU % moves with the load but counts do not (docs/performance.md, "Agent footprint"):
//
//   node --conditions=source --import tsx bench/agent-footprint.ts --baseline DIR \
//     --node-args "--import $PWD/bench/lib/idle-counters.mjs" \
//     --baseline-node-args "--max-semi-space-size=1 --import $PWD/bench/lib/idle-counters.mjs" …
//
// Every 5 s it appends one JSON line of running totals to /tmp/nodelet-idle-counters-<pid>.jsonl:
// CRI calls by RPC (the CRI client's `nodelet:cri:call` diagnostics channel), API requests by
// method and path (undici's `undici:request:create`), scavenges and full GCs, the MiB allocated on
// the V8 heap (the heap used before each GC less the heap used after the one before, from
// v8.GCProfiler) and the process's CPU ms. Rates over a window are differences of two lines.
import { appendFileSync } from 'node:fs';
import { subscribe } from 'node:diagnostics_channel';
import { GCProfiler } from 'node:v8';

const out = `/tmp/nodelet-idle-counters-${process.pid}.jsonl`;
const totals = { scavenges: 0, fullGcs: 0, allocatedMiB: 0, cri: {}, api: {} };
const bump = (m, k) => (m[k] = (m[k] ?? 0) + 1);
let usedAfterLastGc;
let profiler = new GCProfiler();
profiler.start();

subscribe('nodelet:cri:call', (e) => bump(totals.cri, e.rpc));
// The path without its last segment (the object's name): one counter per kind of request.
subscribe('undici:request:create', ({ request }) => bump(totals.api, `${request.method} ${String(request.path).split('?')[0].replace(/\/[^/]*$/, '/*')}`));

function flush() {
  const stats = profiler.stop()?.statistics ?? [];
  profiler = new GCProfiler();
  profiler.start();
  for (const s of stats) {
    if (s.gcType === 'Scavenge' || s.gcType === 'MinorMarkSweep') totals.scavenges++;
    else if (s.gcType === 'MarkSweepCompact') totals.fullGcs++;
    const before = s.beforeGC.heapStatistics.usedHeapSize;
    if (usedAfterLastGc !== undefined) totals.allocatedMiB += Math.max(0, before - usedAfterLastGc) / 2 ** 20;
    usedAfterLastGc = s.afterGC.heapStatistics.usedHeapSize;
  }
  const cpu = process.cpuUsage();
  appendFileSync(out, `${JSON.stringify({ t: Date.now(), cpuMs: (cpu.user + cpu.system) / 1000, ...totals })}\n`);
}
setInterval(flush, 5000).unref();
