/**
 * The `nodelet` CLI composition root: parses arguments with commander and hands off to one
 * command module per family (cli/src/commands/*.ts). Each module exports `register(program)`
 * and keeps only argument parsing and output formatting; the work is done by the packages below.
 */
import { Command } from 'commander';
import { register as registerCri } from './commands/cri.js';
import { register as registerCni } from './commands/cni.js';
import { register as registerImage } from './commands/image.js';
import { register as registerRuntime } from './commands/runtime.js';
import { register as registerOps } from './commands/ops.js';
import { register as registerLab } from './commands/lab.js';
import { register as registerProxy } from './commands/proxy.js';
import { register as registerSoak } from './commands/soak.js';
import { register as registerTrace } from './commands/trace.js';
import { register as registerAudit } from './commands/audit.js';
import { register as registerNode } from './commands/node.js';
import { register as registerCompletion } from './commands/completion.js';

export const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('nodelet')
    .description('a kubelet-like node agent with a thin lab control plane')
    .version(VERSION)
    .showHelpAfterError()
    .enablePositionalOptions();
  program.command('server').description('run the API server, store, scheduler, controllers and registry (see `nodelet server --help`)');
  program.command('agent').description('run the node agent (see `nodelet agent --help`)');
  program.command('etcd').description("the server's etcd: status, snapshot save|restore, defrag (see `nodelet etcd --help`)");
  program.command('snapshot').description("snapshots of the server's store, SQLite or etcd: save, ls, restore, prune (see `nodelet snapshot --help`)");
  // bin/nodelet routes these to their packages; listed here so `nodelet --help` and completion show them.
  program.command('hollow').description('run N hollow nodes in one process against an API server (see `nodelet hollow --help`)');
  registerCri(program);
  registerCni(program);
  registerImage(program);
  registerRuntime(program);
  registerOps(program);
  registerLab(program);
  registerProxy(program);
  registerSoak(program);
  registerTrace(program);
  registerAudit(program);
  registerNode(program);
  registerCompletion(program);
  return program;
}

/** Entry used by bin/nodelet. Exits with the command's status; errors print one line, no stack. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) process.exit(e.exitCode ?? 1);
    process.stderr.write(`nodelet: ${e.message ?? String(err)}\n`);
    process.exit(typeof e.exitCode === 'number' ? e.exitCode : 1);
  }
}
