/**
 * `nodelet hollow --nodes N --kubeconfig <admin kubeconfig>`: N hollow nodes in this one process
 * against a real API server (docs/hollow-nodes.md), for measuring the control plane at scale.
 * Prints `hollow: <n> nodes started in <s> s` on stdout once every node runs, and stops them all on
 * SIGTERM/SIGINT (their leases stop; the Node objects stay registered).
 */
import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Help, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { describeError, type Logger } from '@nodelet/base';
import { defaultKubeconfigPath, loadKubeconfig, type ResolvedKubeconfig } from '@nodelet/api/agent';
import { HollowNodes } from './hollow/hollow-nodes.js';

function positive(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
}

function command(): Command {
  return new Command('hollow')
    // bin/nodelet routes `nodelet <this>` here: the help's usage line names the whole command.
    .configureHelp({ commandUsage: (c) => `nodelet ${new Help().commandUsage(c)}` })
    .description('run N hollow nodes in one process: the real agent above an in-process fake container runtime (docs/hollow-nodes.md)')
    .requiredOption('--nodes <n>', 'number of hollow nodes', positive)
    .option('--kubeconfig <file>', 'admin kubeconfig: issues each node its own system:node:<name> certificate')
    .option('--name-prefix <prefix>', 'node names are <prefix><index>', 'hollow-')
    .option('--pods-per-node <n>', 'maxPods of each node', positive, 110)
    .option('--root-dir <dir>', "parent of the nodes' root directories (default: a temporary directory, removed at exit)")
    .option('--start-concurrency <n>', 'nodes started at once', positive, 10)
    .option('--stats-every <seconds>', 'print a `hollow: stats {json}` line this often (watches open, watch events, pods running)', positive)
    .option('--log-level <level>', 'trace|debug|info|warn|error', 'warn');
}

interface HollowFlags {
  nodes: number;
  kubeconfig?: string;
  namePrefix: string;
  podsPerNode: number;
  rootDir?: string;
  startConcurrency: number;
  statsEvery?: number;
  logLevel: string;
}

/** What `--stats-every` prints: watch fan-out as the nodes see it, and the pods their runtimes run. */
function statsOf(nodes: HollowNodes): { watchesOpen: number; watchesOpened: number; watchEvents: number; sandboxes: number; containers: number } {
  const w = nodes.watches;
  let sandboxes = 0;
  let containers = 0;
  for (const rt of nodes.runtimes) {
    sandboxes += rt.state.sandboxes.size;
    containers += rt.state.containers.size;
  }
  return { watchesOpen: w.open, watchesOpened: w.opened, watchEvents: w.events, sandboxes, containers };
}

export async function main(argv: string[]): Promise<void> {
  const cmd = command();
  cmd.parse(argv[0] === 'hollow' ? argv.slice(1) : argv, { from: 'user' });
  const o = cmd.opts<HollowFlags>();
  const root = pino({ level: o.logLevel, base: { component: 'hollow' } });
  const log = root as unknown as Logger;
  let admin: ResolvedKubeconfig;
  try {
    admin = await loadKubeconfig(o.kubeconfig ?? defaultKubeconfigPath());
  } catch (err) {
    process.stderr.write(`nodelet hollow: ${describeError(err)}\n`);
    process.exitCode = 2;
    return;
  }
  // Same policy as `nodelet agent` (main.ts): a lost rejection is logged, the nodes keep running.
  process.on('unhandledRejection', (err) => root.error({ err: describeError(err) }, 'Unhandled rejection'));
  // A signal during start abandons it; after start it stops the nodes.
  const stop = new AbortController();
  // Every node's start waits on it (its CSR, its turn among --start-concurrency): many listeners by design.
  setMaxListeners(0, stop.signal);
  const onSignal = (sig: NodeJS.Signals): void => {
    root.info({ signal: sig }, 'Shutting down');
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const ownRoot = !o.rootDir;
  const rootDir = o.rootDir ?? (await mkdtemp(join(tmpdir(), 'nodelet-hollow-')));
  const t0 = performance.now();
  let nodes: HollowNodes | undefined;
  try {
    nodes = await HollowNodes.start({
      admin, nodes: o.nodes, namePrefix: o.namePrefix, podsPerNode: o.podsPerNode, rootDir, log, startConcurrency: o.startConcurrency, signal: stop.signal,
    });
    process.stdout.write(`hollow: ${o.nodes} nodes started in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    const started = nodes;
    const stats = o.statsEvery ? setInterval(() => process.stdout.write(`hollow: stats ${JSON.stringify(statsOf(started))}\n`), o.statsEvery * 1000) : undefined;
    stop.signal.addEventListener('abort', () => clearInterval(stats), { once: true });
    if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
  } catch (err) {
    if (!stop.signal.aborted) {
      process.stderr.write(`nodelet hollow: ${describeError(err)}\n`);
      process.exitCode = 1;
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await nodes?.close();
    if (ownRoot) await rm(rootDir, { recursive: true, force: true });
    process.stdout.write('hollow: stopped\n');
  }
}
