// The `nodelet` command tree: every command bin/nodelet routes is listed in `nodelet --help`, and
// every help page's usage line names the whole command (`Usage: nodelet cri ps`, not `Usage: ps`).
// The commands bin/nodelet hands to other packages are checked end to end in
// cli/test/integration/help.itest.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { buildProgram } from './main.js';
import { routedCommands } from './testing/routed.js';

function walk(cmd: Command, visit: (c: Command) => void): void {
  visit(cmd);
  for (const c of cmd.commands) walk(c, visit);
}

test('nodelet --help lists every command bin/nodelet routes elsewhere (hollow was missing)', () => {
  const program = buildProgram();
  const routed = routedCommands();
  assert.ok(routed.includes('hollow') && routed.includes('agent'), `routing table read: ${routed.join(', ')}`);
  const help = program.helpInformation();
  for (const name of routed) assert.match(help, new RegExp(`^  ${name} `, 'm'), `nodelet --help lists ${name}`);
});

test('every command in the tree is listed by its parent and its usage line starts with "Usage: nodelet"', () => {
  const program = buildProgram();
  let count = 0;
  walk(program, (c) => {
    count++;
    const usage = c.helpInformation().split('\n')[0]!;
    const path: string[] = [];
    for (let p: Command | null = c; p; p = p.parent) path.unshift(p.name());
    assert.ok(usage.startsWith(`Usage: ${path.join(' ')}`), `${path.join(' ')}: ${usage}`);
    assert.ok(usage.startsWith('Usage: nodelet'), usage);
    if (c.parent) assert.match(c.parent.helpInformation(), new RegExp(`^  ${c.name()}[ |]`, 'm'), `${path.join(' ')} is listed by its parent`);
  });
  assert.ok(count > 50, `walked ${count} commands`);
});
