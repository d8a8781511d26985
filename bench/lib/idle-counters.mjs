// Preload that counts an agent's work items, for bench/agent-footprint.ts runs on a shared machine
// where CPU % moves with the load but counts do not (docs/performance.md, "Agent footprint").
// bench/agent-footprint.ts `--counters` preloads it into both agents and prints what each idle
// window held; by hand:
//
//   node --conditions=source --import tsx bench/agent-footprint.ts --baseline DIR \
//     --node-args "--import $PWD/bench/lib/idle-counters.mjs" \
//     --baseline-node-args "--max-semi-space-size=1 --import $PWD/bench/lib/idle-counters.mjs" …
//
// Running totals: pod worker passes by phase and trigger with their wall-clock ms (the agent's
// `nodelet:agent:pod-sync` channel), CRI calls by RPC (the CRI client's `nodelet:cri:call`), API
// requests by method and path (undici's `undici:request:create`), connections opened (undici's
// `undici:client:connected` by origin; `net.client.socket` for the others, e.g. gRPC's unix
// socket), scavenges and full GCs with the ms they took, the MiB allocated on the V8 heap (the
// heap used before each GC less the heap used after the one before, from v8.GCProfiler) and the
// process's CPU ms, and the timers that fired by their delay (with NODELET_IDLE_TIMERS=1 also by
// two frames of the stack that set them, outside the clock: a stack per timer costs CPU, so not
// for CPU figures).
//
// Every 5 s it appends one JSON line of the totals to /tmp/nodelet-idle-counters-<pid>.jsonl;
// rates over a window are differences of two lines. Over the bench's IPC channel it answers
//   { op: 'counters' }             → { op: 'counters', totals } (the totals now)
//   { op: 'profile-start' }        → a CPU profile of the main thread and a sampling heap profile
//                                    (what allocated, by stack) start (node:inspector)
//   { op: 'profile-stop', path }   → both stop and are written to `path` (a .cpuprofile) and
//                                    `path` with .heapprofile for its extension
import { appendFileSync, writeFileSync } from 'node:fs';
import { subscribe } from 'node:diagnostics_channel';
import { Session } from 'node:inspector';
import { promisify } from 'node:util';
import { GCProfiler } from 'node:v8';

const out = `/tmp/nodelet-idle-counters-${process.pid}.jsonl`;
const totals = { scavenges: 0, fullGcs: 0, gcMs: 0, allocatedMiB: 0, cri: {}, api: {}, connects: {}, timers: {}, podSyncs: {}, podSyncMs: 0 };
const bump = (m, k) => (m[k] = (m[k] ?? 0) + 1);
let usedAfterLastGc;
let profiler = new GCProfiler();
profiler.start();

subscribe('nodelet:cri:call', (e) => bump(totals.cri, e.rpc));
// The pod workers' passes by phase and by what woke them (the agent's own resync timer or an update).
subscribe('nodelet:agent:pod-sync', (e) => {
  bump(totals.podSyncs, `${e.phase} (${e.trigger})`);
  totals.podSyncMs += e.durationMs;
});
// The path without its last segment (the object's name): one counter per kind of request.
subscribe('undici:request:create', ({ request }) => bump(totals.api, `${request.method} ${String(request.path).split('?')[0].replace(/\/[^/]*$/, '/*')}`));
subscribe('undici:client:connected', ({ connectParams: p }) => bump(totals.connects, `${p.protocol}//${p.host}`));
subscribe('net.client.socket', ({ socket }) => socket.once('connect', () => bump(totals.connects, `net ${socket.remoteAddress ?? 'unix socket'}`)));

countTimers(process.env.NODELET_IDLE_TIMERS === '1');

/**
 * Wraps the global setTimeout/setInterval so each firing counts under its delay (two significant
 * digits: a periodic job's period shows) and, with `stacks`, the two frames that set it outside
 * the clock.
 */
function countTimers(stacks) {
  const where = () => {
    const o = {};
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 12;
    Error.captureStackTrace(o, where);
    Error.stackTraceLimit = limit;
    const frames = o.stack.split('\n').slice(2).map((l) => l.trim().replace(/^at /, '').replace(/\(?(file:\/\/)?\/\S*\/(node_modules|dist|src)\//, '($2/'));
    return frames.filter((f) => !/idle-counters|clock\.js|periodic\.js|node:internal|^new Promise|^Promise|<anonymous>/.test(f)).slice(0, 2).join(' < ');
  };
  const delay = (ms) => (ms >= 100 ? `${Number(Number(ms).toPrecision(2))} ms` : `<100 ms`);
  for (const name of ['setTimeout', 'setInterval']) {
    const orig = globalThis[name];
    const counted = function (fn, ms, ...rest) {
      if (typeof fn !== 'function') return orig.call(this, fn, ms, ...rest);
      const label = `${name === 'setInterval' ? 'every' : 'after'} ${delay(ms ?? 0)}${stacks ? ` ${where()}` : ''}`;
      return orig.call(this, function (...a) {
        bump(totals.timers, label);
        return fn.apply(this, a);
      }, ms, ...rest);
    };
    // util.promisify(setTimeout) finds the promise form here; without it, it would call back-last.
    if (orig[promisify.custom]) counted[promisify.custom] = orig[promisify.custom];
    globalThis[name] = counted;
  }
}

function drainGc() {
  const stats = profiler.stop()?.statistics ?? [];
  profiler = new GCProfiler();
  profiler.start();
  for (const s of stats) {
    if (s.gcType === 'Scavenge' || s.gcType === 'MinorMarkSweep') totals.scavenges++;
    else if (s.gcType === 'MarkSweepCompact') totals.fullGcs++;
    totals.gcMs += s.cost / 1000;
    const before = s.beforeGC.heapStatistics.usedHeapSize;
    if (usedAfterLastGc !== undefined) totals.allocatedMiB += Math.max(0, before - usedAfterLastGc) / 2 ** 20;
    usedAfterLastGc = s.afterGC.heapStatistics.usedHeapSize;
  }
  const cpu = process.cpuUsage();
  return { t: Date.now(), cpuMs: (cpu.user + cpu.system) / 1000, ...totals };
}

setInterval(() => appendFileSync(out, `${JSON.stringify(drainGc())}\n`), 5000).unref();

if (process.send) {
  let session;
  process.on('message', (m) => {
    if (m?.op === 'counters') {
      process.send?.({ op: 'counters', totals: drainGc() });
    } else if (m?.op === 'profile-start') {
      session = new Session();
      session.connect();
      session.post('Profiler.enable', () => session.post('Profiler.start', () =>
        session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }, () => process.send?.({ op: 'profile-start' }))));
    } else if (m?.op === 'profile-stop') {
      session?.post('HeapProfiler.stopSampling', (herr, h) => {
        if (!herr) writeFileSync(m.path.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(h.profile));
        session.post('Profiler.stop', (err, r) => {
          if (!err) writeFileSync(m.path, JSON.stringify(r.profile));
          session.disconnect();
          process.send?.({ op: 'profile-stop', path: err ? undefined : m.path });
        });
      });
    }
  });
}
