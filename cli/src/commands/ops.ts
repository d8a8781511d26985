/**
 * Operations commands: `nodelet install server|agent`, `nodelet uninstall [--purge]`.
 * and `nodelet doctor` (checks in ./doctor/). `token` and `join` register here too.
 */
import type { Command } from 'commander';
import { installAgent, installServer, uninstall, type InstallReport } from './ops/install.js';
import { registerDoctor } from './doctor/command.js';

function printReport(r: InstallReport): void {
  for (const f of r.files) process.stdout.write(`${f.outcome.padEnd(9)} ${f.path}\n`);
  for (const u of r.started) process.stdout.write(`started   ${u}\n`);
  if (!r.changed) process.stdout.write('nothing changed\n');
}

const commonOptions = (c: Command): Command =>
  c
    .option('--config-dir <dir>', 'configuration directory', '/etc/nodelet')
    .option('--state-dir <dir>', 'state directory', '/var/lib/nodelet')
    .option('--bin-path <path>', 'where to put the nodelet wrapper', '/usr/local/bin/nodelet')
    .option('--no-start', 'write files only; do not enable or start the units')
    .option('--watchdog-sec <n>', 'WatchdogSec= of the unit', (v) => Number(v))
    .option('--restart-sec <d>', 'RestartSec= of the unit');

export function register(program: Command): void {
  registerDoctor(program);
  const install = program.command('install').description('install nodelet as systemd services (idempotent)');

  commonOptions(install.command('server').description('install and start nodelet-server.service'))
    .option('--port <port>', 'API server port', (v) => Number(v))
    .option('--bind-address <addr>', 'API server bind address')
    .action((o) => {
      printReport(
        installServer({
          configDir: o.configDir, stateDir: o.stateDir, binPath: o.binPath, noStart: !o.start,
          watchdogSec: o.watchdogSec, restartSec: o.restartSec, port: o.port, bindAddress: o.bindAddress,
        }),
      );
    });

  commonOptions(install.command('agent').description('install and start nodelet-agent.service (use `nodelet join` to get a credential)'))
    .option('--kubeconfig <path>', 'the agent kubeconfig (written by `nodelet join`)')
    .option('--node-name <name>', 'node name (default: hostname)')
    .action((o) => {
      printReport(
        installAgent({
          configDir: o.configDir, stateDir: o.stateDir, binPath: o.binPath, noStart: !o.start,
          watchdogSec: o.watchdogSec, restartSec: o.restartSec, kubeconfig: o.kubeconfig, nodeName: o.nodeName,
        }),
      );
    });

  program
    .command('uninstall')
    .description('stop and remove exactly what `nodelet install` wrote')
    .option('--purge', 'also remove the state and configuration directories')
    .option('--config-dir <dir>', 'configuration directory', '/etc/nodelet')
    .option('--state-dir <dir>', 'state directory', '/var/lib/nodelet')
    .action((o) => {
      const r = uninstall({ configDir: o.configDir, stateDir: o.stateDir, purge: o.purge });
      for (const p of r.removed) process.stdout.write(`removed   ${p}\n`);
      for (const p of r.keptModified) process.stdout.write(`kept      ${p} (changed since install)\n`);
      for (const p of r.purged) process.stdout.write(`purged    ${p}\n`);
    });
}
