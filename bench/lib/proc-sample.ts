/**
 * What a process costs over a window, read from /proc (the benches run Linux): its peak RSS and
 * the CPU it used, as a fraction of one core. USER_HZ is 100 on every Linux this runs on.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseProcStat } from '../../agent/src/stats/node-readings.js';
import { percentile } from './percentile.js';

const CLK_TCK = 100;

/** utime + stime of a /proc `stat` text (a process's or a thread's), in seconds. */
function cpuSecondsOf(stat: string): number {
  // The fields after the command name, which may itself hold spaces and parentheses.
  const f = stat.split(') ').pop()!.split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** CPU seconds (utime + stime) `pid` has used so far. */
export function processCpuSeconds(pid: number): number {
  return cpuSecondsOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** CPU seconds the main thread of `pid` (a Node process's JavaScript thread) has used so far. */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
}

/** CPU seconds of each thread of `pid` so far, by thread name (threads of one name summed), the main thread as `main`. */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out[name] = (out[name] ?? 0) + cpuSecondsOf(stat);
    } catch {
      // The thread ended between the listing and the read: its time went with it.
    }
  }
  return out;
}

/** CPU seconds the machine's cores have spent busy so far (/proc/stat as the agent reads it for the node's stats). */
export function machineCpuSeconds(): number {
  return parseProcStat(readFileSync('/proc/stat', 'utf8')).cpuUsageNs / 1e9;
}

/** VmRSS and its anonymous part (RssAnon: heap and native memory, not the binary's mapped pages), MiB. */
function rssMiB(pid: number): { rss: number; anon: number } {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
}

/**
 * Peak and median RSS, and the median of its anonymous part (MiB, sampled every `everyMs`), and
 * CPU (fraction of one core) of `pid` over `ms`.
 */
export async function sampleProcess(pid: number, ms: number, everyMs = 250): Promise<{ rssMaxMiB: number; rssMedianMiB: number; rssAnonMedianMiB: number; cpu: number }> {
  const t0 = processCpuSeconds(pid);
  const s0 = performance.now();
  const rss: number[] = [];
  const anon: number[] = [];
  while (performance.now() - s0 < ms) {
    const r = rssMiB(pid);
    rss.push(r.rss);
    anon.push(r.anon);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return {
    rssMaxMiB: Math.max(0, ...rss),
    rssMedianMiB: percentile(rss, 50),
    rssAnonMedianMiB: percentile(anon, 50),
    cpu: (processCpuSeconds(pid) - t0) / ((performance.now() - s0) / 1000),
  };
}
