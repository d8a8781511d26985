// CNI engine overhead: ADD+DEL of the default node chain (bridge + host-local, portmap with a
// hostPort) through CniEngine, against a minimal loop making the same plugin invocations
// directly (spawn, stdin, parse stdout; no VERSION, no cache, no serialisation). Both run in the
// same process on the same netns, interleaved, so machine noise hits both alike.
//
//   node --conditions=source --import tsx bench/cni.ts [--iterations 50] [--json]
//
// Needs root and /usr/lib/cni. Uses bridge nlc4, subnet 10.233.4.0/24; removes everything.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildEnv, buildNodeChain, CniEngine, type RuntimeConf } from '@nodelet/cni';
import { natCniLines, restoreNat } from '../cni/test/integration/host.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({ options: { iterations: { type: 'string', default: '50' }, json: { type: 'boolean', default: false } } });
const N = Number(args.iterations);
const PLUGIN_DIR = '/usr/lib/cni';
const NETNS = 'nlc-bench';

if (process.getuid?.() !== 0) {
  process.stderr.write('bench/cni: needs root (netns, bridge, iptables)\n');
  process.exit(2);
}

function execPlugin(type: string, env: Record<string, string>, stdin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(PLUGIN_DIR, type), [], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${type} ${env.CNI_COMMAND} exit ${code}: ${out}`))));
    child.stdin.end(stdin);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'nlc-bench-'));
const list = buildNodeChain({ name: 'nlc-bench', podCIDR: '10.233.4.0/24', bridgeName: 'nlc4', ipamDataDir: join(dir, 'ipam') });
const engine = new CniEngine({ binDirs: [PLUGIN_DIR], cacheDir: join(dir, 'cache') });
const caps = { portMappings: [{ hostPort: 18084, containerPort: 80, protocol: 'tcp' }] };

/** The same requests the engine sends, built once: the loop only spawns and chains. */
async function directAddDel(rt: RuntimeConf): Promise<void> {
  const [bridge, portmap] = list.plugins;
  const { capabilities: _c, ...pm } = portmap!;
  const bridgeReq = { cniVersion: '1.0.0', name: list.name, ...bridge };
  const addEnv = buildEnv('ADD', rt, [PLUGIN_DIR]);
  const r1 = await execPlugin('bridge', addEnv, JSON.stringify(bridgeReq));
  const prev = JSON.parse(r1);
  const portmapReq = { cniVersion: '1.0.0', name: list.name, ...pm, runtimeConfig: caps, prevResult: prev };
  const r2 = await execPlugin('portmap', addEnv, JSON.stringify(portmapReq));
  const delEnv = buildEnv('DEL', rt, [PLUGIN_DIR]);
  await execPlugin('portmap', delEnv, JSON.stringify({ ...portmapReq, prevResult: JSON.parse(r2) }));
  await execPlugin('bridge', delEnv, JSON.stringify({ ...bridgeReq, prevResult: JSON.parse(r2) }));
}

const natBefore = await natCniLines();
const engineMs: number[] = [];
const directMs: number[] = [];
try {
  execFileSync('ip', ['netns', 'add', NETNS]);
  const rt = (id: string): RuntimeConf => ({ containerID: id, netns: `/run/netns/${NETNS}`, ifName: 'eth0', capabilityArgs: caps });
  await engine.add(list, rt('warmup')); // VERSION answers get cached; bridge gets created
  await engine.del(list, rt('warmup'));
  const viaEngine = async (i: number): Promise<void> => {
    const t0 = performance.now();
    await engine.add(list, rt(`e${i}`));
    await engine.del(list, rt(`e${i}`));
    engineMs.push(performance.now() - t0);
  };
  const direct = async (i: number): Promise<void> => {
    const t0 = performance.now();
    await directAddDel(rt(`d${i}`));
    directMs.push(performance.now() - t0);
  };
  // Alternate which goes first so neither always runs on a warmer (or busier) machine.
  for (let i = 0; i < N; i++) {
    if (i % 2 === 0) await viaEngine(i).then(() => direct(i));
    else await direct(i).then(() => viaEngine(i));
  }
} finally {
  try {
    execFileSync('ip', ['netns', 'del', NETNS]);
  } catch {
    // Not created (the run failed before) or already gone.
  }
  try {
    execFileSync('ip', ['link', 'del', 'nlc4']);
  } catch {
    // The bridge plugin made no bridge, or DEL removed it.
  }
  await restoreNat(natBefore, [list.name]);
  rmSync(dir, { recursive: true, force: true });
}

const summary = {
  iterations: N,
  engine: { p50: percentile(engineMs, 50), p99: percentile(engineMs, 99) },
  direct: { p50: percentile(directMs, 50), p99: percentile(directMs, 99) },
  ratioP50: percentile(engineMs, 50) / percentile(directMs, 50),
  ratioP99: percentile(engineMs, 99) / percentile(directMs, 99),
};
if (args.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
else {
  const f = (x: number): string => `${x.toFixed(1)} ms`;
  process.stdout.write(`ADD+DEL of bridge+host-local+portmap, ${N} iterations (4 plugin execs each)\n`);
  process.stdout.write(`  engine  p50 ${f(summary.engine.p50)}  p99 ${f(summary.engine.p99)}\n`);
  process.stdout.write(`  direct  p50 ${f(summary.direct.p50)}  p99 ${f(summary.direct.p99)}\n`);
  process.stdout.write(`  ratio   p50 ${summary.ratioP50.toFixed(2)}x  p99 ${summary.ratioP99.toFixed(2)}x\n`);
}
