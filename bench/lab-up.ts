/**
 * bench/lab-up: how long `nodelet lab up` takes and where (the quickstart's `make up`, and every
 * lab-based test's start), this checkout's built dist beside a baseline checkout's in the same
 * run, alternating. Each run is `node <root>/bin/nodelet lab up` on private ports, a private state
 * dir, bridge and cluster CIDR, timed line by line, then `lab down` on the same state dir.
 *
 *   cd /work && git worktree add --detach /tmp/nodelet-base <old-commit>
 *   cp -a node_modules /tmp/nodelet-base/ && (cd /tmp/nodelet-base && npx tsc -b)
 *   sudo node --conditions=source --import tsx bench/lab-up.ts [--baseline /tmp/nodelet-base] [--runs 3]
 *
 * Needs root and `make build` (it runs dist/, as `make up` does). Meant for an otherwise idle machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@nodelet/base/testing';

const { values } = parseArgs({ options: { baseline: { type: 'string' }, runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants a whole number above 0, got "${values.runs}"`);
if (process.getuid?.() !== 0) throw new Error('bench/lab-up needs root (containerd, the pod bridge)');
const here = new URL('..', import.meta.url).pathname;
const variants = [{ label: 'this checkout', root: here }, ...(values.baseline ? [{ label: 'baseline', root: resolve(values.baseline) }] : [])];

/** Runs `node <root>/bin/nodelet …args`; each output line with its offset (s) from the start. */
function nodelet(root: string, args: string[]): Promise<{ code: number; seconds: number; lines: Array<[number, string]> }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const lines: Array<[number, string]> = [];
    const child = spawn(process.execPath, [join(root, 'bin', 'nodelet'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    const take = (b: Buffer): void => {
      const parts = (partial + b.toString('utf8')).split('\n');
      partial = parts.pop()!;
      for (const p of parts) if (p.trim()) lines.push([(performance.now() - t0) / 1000, p.trim()]);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, seconds: (performance.now() - t0) / 1000, lines }));
  });
}

/** The seconds each step of `lab up` took: from its "…" line to the next line. */
function steps(lines: Array<[number, string]>, total: number): Map<string, number> {
  const out = new Map<string, number>();
  const marked = lines.filter(([, l]) => l.endsWith('…'));
  marked.forEach(([t, l], i) => {
    const next = lines.find(([u]) => u > t)?.[0] ?? total;
    const step = l.replace(/ on :\d+.*$/, '').replace(/ as node ".*"/, '').replace(/…$/, '');
    out.set(step, (out.get(step) ?? 0) + (marked[i + 1] ? Math.min(next, marked[i + 1]![0]) : next) - t);
  });
  return out;
}

const results = new Map<string, Array<{ total: number; steps: Map<string, number> }>>(variants.map((v) => [v.label, []]));
console.log(`nodelet lab up, ${runs} run(s) per checkout, alternating (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
for (let r = 0; r < runs; r++) {
  for (const v of variants) {
    const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-bench-labup-'));
    const ports = { api: await freePort(), registry: await freePort(), nodeApi: await freePort(), healthz: await freePort() };
    const common = ['--state-dir', stateDir, '--api-port', String(ports.api), '--node-api-port', String(ports.nodeApi), '--healthz-port', String(ports.healthz), '--cluster-cidr', '10.219.0.0/16'];
    try {
      const up = await nodelet(v.root, ['lab', 'up', ...common, '--registry', `127.0.0.1:${ports.registry}`, '--bridge', 'nlb-labup', '--node-name', 'labup-bench']);
      if (up.code !== 0) throw new Error(`${v.label}: lab up exited ${up.code}:\n${up.lines.map(([, l]) => l).join('\n')}`);
      results.get(v.label)!.push({ total: up.seconds, steps: steps(up.lines, up.seconds) });
      console.log(`  run ${r + 1}, ${v.label}: ${up.seconds.toFixed(2)} s`);
    } finally {
      const down = await nodelet(v.root, ['lab', 'down', ...common]);
      if (down.code !== 0) console.error(`${v.label}: lab down exited ${down.code}:\n${down.lines.map(([, l]) => l).join('\n')}`);
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
}

const range = (xs: number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} s`;
for (const [label, rs] of results) {
  console.log(`\n${label}: lab up ${range(rs.map((x) => x.total))}`);
  for (const step of rs[0]!.steps.keys()) console.log(`  ${step.padEnd(70)} ${range(rs.map((x) => x.steps.get(step) ?? 0))}`);
}
