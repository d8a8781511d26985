/**
 * bench/spawn-cost: what one child process costs the Node process that spawns it, by its size.
 * The agent spawns every CNI plugin (bridge, portmap: twice per pod ADD or DEL) and mount(8) for
 * every projected volume, and a spawn forks the caller on its main thread (libuv's uv_spawn), so
 * it grows with what the caller has mapped. Spawns `/bin/true` serially and 50 at once from this
 * process as it starts (the baseline), then again after `--resident-mib` (default 150, about the
 * agent's RSS in a 60-pod burst) of touched memory, in the same run.
 *
 *   node --conditions=source --import tsx bench/spawn-cost.ts [--resident-mib 150] [--spawns 50]
 *
 * Meant for an otherwise idle machine: under load a fork also waits for a core.
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { 'resident-mib': { type: 'string', default: '150' }, spawns: { type: 'string', default: '50' } } });
const residentMiB = Number(values['resident-mib']);
const spawns = Number(values.spawns);
if (!Number.isInteger(residentMiB) || residentMiB < 1) throw new Error(`--resident-mib wants a whole number above 0, got "${values['resident-mib']}"`);
if (!Number.isInteger(spawns) || spawns < 1) throw new Error(`--spawns wants a whole number above 0, got "${values.spawns}"`);

const once = (): Promise<void> => new Promise((resolve, reject) => execFile('/bin/true', [], (err) => (err ? reject(err) : resolve())));

/** Mean ms per spawn, one after another, and the wall ms of `spawns` at once; best of three rounds each. */
async function measure(): Promise<{ serialMs: number; parallelMs: number }> {
  let serialMs = Infinity;
  let parallelMs = Infinity;
  for (let round = 0; round < 3; round++) {
    let t = performance.now();
    for (let i = 0; i < spawns; i++) await once();
    serialMs = Math.min(serialMs, (performance.now() - t) / spawns);
    t = performance.now();
    await Promise.all(Array.from({ length: spawns }, once));
    parallelMs = Math.min(parallelMs, performance.now() - t);
  }
  return { serialMs, parallelMs };
}

const rss = (): string => `${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`;
console.log(`spawn cost of /bin/true, ${spawns} spawns, best of 3 (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
const bare = await measure();
console.log(`bare process (RSS ${rss()}):     ${bare.serialMs.toFixed(2)} ms per spawn; ${spawns} at once ${bare.parallelMs.toFixed(0)} ms`);
// Touched, so the pages are resident and in the page tables a fork copies.
const held = Array.from({ length: residentMiB }, () => Buffer.alloc(2 ** 20, 1));
const big = await measure();
console.log(`with ${residentMiB} MiB resident (RSS ${rss()}): ${big.serialMs.toFixed(2)} ms per spawn; ${spawns} at once ${big.parallelMs.toFixed(0)} ms`);
console.log(`ratio ${(big.serialMs / bare.serialMs).toFixed(2)}× per spawn (${held.length} MiB held)`);
