// For the command-tree tests: what bin/nodelet routes to packages other than the CLI.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The subcommands bin/nodelet routes to another package's entry point (its routing table's keys). */
export function routedCommands(): string[] {
  const text = readFileSync(fileURLToPath(new URL('../../../bin/nodelet', import.meta.url)), 'utf8');
  const table = /const \[pkg, file\] = \{(.*?)\}\[process\.argv\[2\]\]/s.exec(text)?.[1];
  if (!table) throw new Error('bin/nodelet has no routing table where expected');
  return [...table.matchAll(/(?:^|,)\s*'?([a-z-]+)'?\s*:/g)].map((m) => m[1]!);
}
