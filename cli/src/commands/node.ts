/**
 * `nodelet node info`: what this machine is, as the node agent would run on it — OS, CPU, memory,
 * disks, network interfaces and virtualisation (the inventory `nodelet doctor` prints first).
 */
import type { Command } from 'commander';
import { stringify as toYaml } from 'yaml';
import { AgentError } from '@nodelet/base';
import { collectInventory, formatInventory } from './doctor/inventory.js';

export function register(program: Command): void {
  const node = program.command('node').description('diagnostics of this machine as a node (see `nodelet node info`)');
  node
    .command('info')
    .description('print this machine\'s OS, CPU, memory, disks, network interfaces and virtualisation')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .action(async (o: { output: string }) => {
      if (!['text', 'json', 'yaml'].includes(o.output)) throw new AgentError('ERR_INVALID_ARGUMENT', `unsupported output format "${o.output}": use text, json or yaml`);
      const inv = await collectInventory();
      process.stdout.write(o.output === 'json' ? `${JSON.stringify(inv, null, 2)}\n` : o.output === 'yaml' ? toYaml(inv) : `${formatInventory(inv)}\n`);
    });
}
