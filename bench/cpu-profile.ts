/**
 * bench/cpu-profile: what a V8 CPU profile (`node --cpu-prof`, e.g. the agent's from
 * `bench/pod-startup.ts --agent-node-args "--cpu-prof --cpu-prof-dir=DIR"`) says, as text:
 * the sampled time, the self time by package or source directory and by function, and, with
 * `--callers NAME`, which of this repository's functions the time spent in NAME came from
 * (e.g. `--callers ChildProcess.spawn`: which spawns held the main thread).
 *
 *   node --conditions=source --import tsx bench/cpu-profile.ts DIR/CPU.….cpuprofile [--top 20] [--callers NAME]
 *
 * Self time is wall time with that frame on top of the sampled thread's stack: a thread blocked in
 * a system call (a fork, a synchronous read) is counted in the call, waiting for a core included.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '20' }, callers: { type: 'string' } } });
const file = positionals[0];
if (!file) throw new Error('usage: bench/cpu-profile.ts FILE.cpuprofile [--top N] [--callers FUNCTION]');
const top = Number(values.top);
if (!Number.isInteger(top) || top < 1) throw new Error(`--top wants a whole number above 0, got "${values.top}"`);

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
/** Microseconds with each node on top of the stack. */
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const repo = new URL('..', import.meta.url).pathname;
const inRepo = (url: string): boolean => url.includes(repo) && !url.includes('/node_modules/');
const short = (url: string): string => url.replace(/^file:\/\//, '').replace(repo, '').replace(/^.*\/node_modules\//, 'node_modules/');
/** node_modules/<package>, <dir>/src/<subdir> of this repository, node:<module>, or (native). */
const moduleOf = (f: CallFrame): string => {
  const u = short(f.url);
  if (!u) return f.functionName.startsWith('(') ? f.functionName : `(${f.functionName || 'native'})`;
  return /^node_modules\/(@[^/]+\/)?[^/]+/.exec(u)?.[0] ?? /^[^/]+\/src\/[^/]+/.exec(u)?.[0] ?? u;
};
const fnOf = (f: CallFrame): string => `${f.functionName || '(anonymous)'} ${short(f.url) || '(native)'}${f.url ? `:${f.lineNumber + 1}` : ''}`;

let total = 0;
const byModule = new Map<string, number>();
const byFunction = new Map<string, number>();
const callers = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id)!;
  total += us;
  byModule.set(moduleOf(node.callFrame), (byModule.get(moduleOf(node.callFrame)) ?? 0) + us);
  byFunction.set(fnOf(node.callFrame), (byFunction.get(fnOf(node.callFrame)) ?? 0) + us);
  if (values.callers && node.callFrame.functionName === values.callers) {
    let up = parent.get(id);
    while (up !== undefined && !inRepo(byId.get(up)!.callFrame.url)) up = parent.get(up);
    const label = up === undefined ? '(no caller in this repository)' : fnOf(byId.get(up)!.callFrame);
    callers.set(label, (callers.get(label) ?? 0) + us);
  }
}

function show(title: string, m: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(us / 1000).toFixed(0).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`);
  }
}

console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
show('self time by module', byModule);
show('self time by function', byFunction);
if (values.callers) show(`time in ${values.callers}, by the first caller in this repository`, callers);
