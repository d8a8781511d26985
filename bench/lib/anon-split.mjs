// Splits a process's anonymous RSS by the kind of mapping that holds it, from /proc/<pid>/smaps
// (docs/performance.md, "Issue 28 item 3, third pass"). Run as root beside a bench:
//   node bench/lib/anon-split.mjs <pid>
// and, for glibc's own view of its arenas (printed on the process's stderr):
//   gdb -p <pid> -batch -ex 'call (void)malloc_stats()'
// Kinds: `[heap]` is glibc's main arena (brk); a 64 MiB-aligned read-write mapping whose reserved
// rest makes it 64 MiB is a glibc thread arena (HEAP_MAX_SIZE on 64-bit); a mapping that holds a
// thread's stack pointer (/proc/<pid>/task/*/syscall) is a stack; anonymous executable mappings are
// V8's code space; the rest is V8's heap pages and any malloc chunks above the mmap threshold.
import { readFileSync, readdirSync } from 'node:fs';

const pid = process.argv[2];
if (!pid) throw new Error('usage: node bench/lib/anon-split.mjs <pid>');
const ARENA = 64n << 20n;
const maps = [];
let cur;
for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
  const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
  if (m) {
    cur = { start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), perms: m[3], path: m[4].trim(), anonKb: 0 };
    maps.push(cur);
  } else if (cur && line.startsWith('Anonymous:')) cur.anonKb = Number(/(\d+) kB/.exec(line)[1]);
}
// A blocked thread's stack pointer is the second-to-last field of its syscall line.
const sps = [];
for (const t of readdirSync(`/proc/${pid}/task`)) {
  const f = readFileSync(`/proc/${pid}/task/${t}/syscall`, 'utf8').trim().split(' ');
  if (f.length >= 8) sps.push(BigInt(f[f.length - 2]));
}
const kinds = new Map();
maps.forEach((m, i) => {
  if (!m.anonKb) return;
  const next = maps[i + 1];
  const span = next?.perms === '---p' && next.start === m.end ? next.end - m.start : m.end - m.start;
  let kind;
  if (m.path === '[heap]') kind = 'glibc main arena ([heap])';
  else if (m.path === '[stack]' || sps.some((sp) => sp >= m.start && sp < m.end)) kind = 'thread stacks';
  else if (m.path.startsWith('/')) kind = 'private pages of mapped files (data, relro)';
  else if (m.start % ARENA === 0n && m.perms === 'rw-p' && span === ARENA) kind = 'glibc thread arenas';
  else if (m.perms.includes('x')) kind = 'anonymous executable (V8 code space)';
  else if (i > 0 && maps[i - 1].path.startsWith('/') && maps[i - 1].end === m.start) kind = 'private pages of mapped files (data, relro)';
  else kind = 'other anonymous (V8 heap pages, large malloc chunks)';
  const k = kinds.get(kind) ?? { kb: 0, n: 0 };
  kinds.set(kind, { kb: k.kb + m.anonKb, n: k.n + 1 });
});
const status = readFileSync(`/proc/${pid}/status`, 'utf8');
console.log(status.split('\n').filter((l) => /^(VmRSS|RssAnon|RssFile|Threads)/.test(l)).map((l) => l.replace(/\s+/g, ' ')).join('; '));
let total = 0;
for (const [kind, { kb, n }] of [...kinds].sort((a, b) => b[1].kb - a[1].kb)) {
  total += kb;
  console.log(`${(kb / 1024).toFixed(2).padStart(8)} MiB ${String(n).padStart(4)} mappings  ${kind}`);
}
console.log(`${(total / 1024).toFixed(2).padStart(8)} MiB        total anonymous`);
