/**
 * The CLI side of the service proxy (docs/services.md): `nodelet proxy` itself runs in the agent
 * package (bin/nodelet routes it to agent/src/proxy-main.ts); here are the pieces the other
 * commands need without importing the agent: removing the table (`lab down`, `uninstall`) and
 * reading it (`doctor`). The table name and the nft commands are the agent's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import type { Command } from 'commander';

export const PROXY_TABLE = 'nodelet-proxy';

/** Deletes `table ip nodelet-proxy` if it exists. Never throws: a missing nft or table is fine. */
export function removeProxyTable(): { removed: boolean; problem?: string } {
  const exists = spawnSync('nft', ['list', 'table', 'ip', PROXY_TABLE], { stdio: 'ignore' }).status === 0;
  if (!exists) return { removed: false };
  try {
    execFileSync('nft', ['delete', 'table', 'ip', PROXY_TABLE], { stdio: ['ignore', 'ignore', 'pipe'] });
    return { removed: true };
  } catch (err) {
    return { removed: false, problem: `nft delete table ip ${PROXY_TABLE}: ${(err as { stderr?: Buffer }).stderr?.toString().trim() ?? String(err)}` };
  }
}

/** nft's JSON for the table, or undefined when it does not exist; throws when nft cannot run. */
export function readProxyTable(): { nftables: Array<Record<string, Record<string, unknown>>> } | undefined {
  const r = spawnSync('nft', ['-j', 'list', 'table', 'ip', PROXY_TABLE], { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) return undefined;
  return JSON.parse(r.stdout) as { nftables: Array<Record<string, Record<string, unknown>>> };
}

/** `nodelet proxy` in `nodelet --help`; bin/nodelet hands the command to the agent package. */
export function register(program: Command): void {
  program.command('proxy').description('run the service proxy alone, or print its rules: `nodelet proxy rules` (see `nodelet proxy --help`)');
}
