// Preloaded into an agent child by bench/agent-footprint.ts (`node --expose-gc --import <this>`):
// answers the bench over the IPC channel, so the agent under test needs no debug hooks of its own
// and the old and the new agent are measured the same way.
//   { op: 'measure' }           → two full GCs, then process.memoryUsage() and V8's heap spaces
//   { op: 'snapshot', path }    → v8.writeHeapSnapshot(path) (itself preceded by a full GC)
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

if (process.send) {
  // The channel must not keep the agent alive: SIGTERM still ends it the usual way.
  process.channel?.unref();
  process.on('message', (m) => {
    if (m?.op === 'measure') {
      globalThis.gc?.();
      globalThis.gc?.();
      const spaces = Object.fromEntries(getHeapSpaceStatistics().map((x) => [x.space_name, { used: x.space_used_size, committed: x.space_size }]));
      process.send?.({ op: 'measure', usage: process.memoryUsage(), spaces });
    } else if (m?.op === 'snapshot') {
      process.send?.({ op: 'snapshot', path: writeHeapSnapshot(m.path) });
    }
  });
}
