// The docs test's coverage (issue 32): every `sh` block of README.md and docs/*.md is typed by
// docs.itest.ts or marked with why not; the blocks of docs it does not type yet are counted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allBlocks, shBlocks } from './doc-blocks.js';
import { RUN } from './docs-run.js';

test('every sh block is typed by the docs test or marked with why not', (t) => {
  const blocks = allBlocks();
  for (const b of blocks) {
    if (b.mark?.kind === 'skip') assert.match(b.mark.why, /^\(.+\)$/, `${b.file}:${b.line}: docs-test: skip needs a reason in parentheses`);
  }
  for (const file of RUN) {
    const todo = shBlocks(file).filter((b) => b.mark?.kind === 'todo');
    assert.deepEqual(todo.map((b) => `${b.file}:${b.line}`), [], `${file} is typed by the docs test: a block there is run or skipped with a reason`);
  }
  const notRun = blocks.filter((b) => !RUN.includes(b.file) || b.mark?.kind === 'todo');
  const byFile = new Map<string, number>();
  for (const b of notRun) byFile.set(b.file, (byFile.get(b.file) ?? 0) + 1);
  t.diagnostic(`docs-test: todo: ${notRun.length} of ${blocks.length} sh blocks not typed yet (${[...byFile].map(([f, n]) => `${f} ${n}`).join(', ')})`);
});

test('a command with "prints <word>" in its comment expects that word', () => {
  const readme = shBlocks('README.md').flatMap((b) => b.commands);
  assert.ok(readme.some((c) => c.expect === '2' && c.text.includes('wc -l')), 'README\'s wc -l example expects 2');
});
