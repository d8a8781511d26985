/**
 * What a process costs over a window, read from /proc (the benches run Linux): its peak RSS and
 * the CPU it used, as a fraction of one core. USER_HZ is 100 on every Linux this runs on.
 */
import { readFileSync } from 'node:fs';

const CLK_TCK = 100;

/** utime + stime of `pid`, in clock ticks. */
function cpuTicks(pid: number): number {
  // The fields after the command name, which may itself hold spaces and parentheses.
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
  return Number(f[11]) + Number(f[12]);
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** Peak RSS (MiB, sampled every `everyMs`) and CPU (fraction of one core) of `pid` over `ms`. */
export async function sampleProcess(pid: number, ms: number, everyMs = 250): Promise<{ rssMaxMiB: number; cpu: number }> {
  const t0 = cpuTicks(pid);
  const s0 = performance.now();
  let rssMax = 0;
  while (performance.now() - s0 < ms) {
    rssMax = Math.max(rssMax, rssMiB(pid));
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return { rssMaxMiB: rssMax, cpu: (cpuTicks(pid) - t0) / CLK_TCK / ((performance.now() - s0) / 1000) };
}
