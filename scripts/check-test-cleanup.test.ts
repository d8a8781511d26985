// node:test runs `t.after` hooks first in, first out: a `t.after(() => rm(dir))` followed by
// `t.after(() => server.close())` deletes the dir while the server still uses it. Tests put their
// cleanups on one last-in first-out stack instead (`cleanups(t)` from @nodelet/base/testing); this
// test fails when a test file registers an `rm` with `<ctx>.after` and then another
// `<ctx>.after` in the same function body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RM_AFTER = /(?<![\w.])(\w+)\.after\(\(\) => (?:rm|rmSync)\(/;

/** Lines (1-based) of each `<ctx>.after(() => rm…)` followed by another `<ctx>.after` in the same body. */
function fifoCleanups(source: string): number[] {
  const lines = source.split('\n');
  const indent = (s: string): number => s.length - s.trimStart().length;
  const found: number[] = [];
  lines.forEach((line, i) => {
    const m = RM_AFTER.exec(line);
    if (!m) return;
    const later = new RegExp(`(?<![\\w.])${m[1]}\\.after\\(`);
    // The body ends at the first closing line indented less than the rm line.
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trim() && indent(l) < indent(line) && l.trimStart().startsWith('}')) break;
      if (later.test(l)) {
        found.push(i + 1);
        break;
      }
    }
  });
  return found;
}

test('fifoCleanups finds an rm hook followed by another hook of the same context in the same body', () => {
  const bad = ["test('x', async (t) => {", '  t.after(() => rm(dir, {}));', '  const s = start();', '  t.after(() => s.close());', '});'].join('\n');
  assert.deepEqual(fifoCleanups(bad), [2]);
  const separate = ["test('x', async (t) => {", '  t.after(() => rmSync(dir));', '});', "test('y', async (t) => {", '  t.after(() => s.close());', '});'].join('\n');
  assert.deepEqual(fifoCleanups(separate), []);
  const stacked = ["test('x', async (t) => {", '  const cleanup = cleanups(t);', '  cleanup(() => rm(dir));', '  cleanup(() => s.close());', '});'].join('\n');
  assert.deepEqual(fifoCleanups(stacked), []);
});

test('no test registers an rm cleanup with t.after and then another t.after (use cleanups(t): LIFO)', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const files = execFileSync('git', ['ls-files', '*.test.ts', '*.itest.ts'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const problems = files.flatMap((f) => fifoCleanups(readFileSync(join(root, f), 'utf8')).map((line) => `${f}:${line}`));
  assert.deepEqual(problems, [], 'these remove a dir in a t.after that runs before later t.after hooks (node:test runs them first in, first out); use cleanups(t)');
});
