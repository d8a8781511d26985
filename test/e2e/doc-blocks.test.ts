// The docs test's coverage (issue 32): every `sh` block of README.md and docs/*.md is typed by
// docs.itest.ts (its doc is in RUN and the block is not marked) or marked skip with why not;
// nothing is left unclassified or marked todo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { allBlocks, REPO_ROOT, shBlocks } from './doc-blocks.js';
import { RUN } from './docs-run.js';

test('every sh block is typed by the docs test or marked skip with why not', (t) => {
  const blocks = allBlocks();
  for (const b of blocks) {
    if (b.mark?.kind === 'skip') assert.match(b.mark.why, /^\(.+\)$/, `${b.file}:${b.line}: docs-test: skip needs a reason in parentheses`);
  }
  for (const file of RUN) assert.ok(existsSync(join(REPO_ROOT, file)), `docs-run.ts names ${file}, which does not exist`);
  const todo = blocks.filter((b) => b.mark?.kind === 'todo');
  assert.deepEqual(todo.map((b) => `${b.file}:${b.line}`), [], 'a block is run or skipped with a reason, not left todo');
  const unclassified = blocks.filter((b) => !b.mark && !RUN.includes(b.file));
  assert.deepEqual(unclassified.map((b) => `${b.file}:${b.line}`), [], 'a page with a block to run goes into test/e2e/docs-run.ts; else each block is marked skip (why)');
  const run = blocks.filter((b) => !b.mark);
  t.diagnostic(`docs-test: ${run.length} of ${blocks.length} sh blocks typed (${run.reduce((n, b) => n + b.commands.length, 0)} commands), the rest marked skip`);
});

test('a command with "prints <word>" in its comment expects that word', () => {
  const readme = shBlocks('README.md').flatMap((b) => b.commands);
  assert.ok(readme.some((c) => c.expect === '2' && c.text.includes('wc -l')), 'README\'s wc -l example expects 2');
});
