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
const HOOK_BLOCK = /(?<![\w.])(\w+)\.after\((?:async )?\(\) => \{$/;
const RM_CALL = /(?<![\w.])(?:rm|rmSync)\(/;

/** Lines (1-based) of each `<ctx>.after(() => rm…)` followed by another `<ctx>.after` in the same body. */
function fifoCleanups(source: string): number[] {
  const lines = source.split('\n');
  const indent = (s: string): number => s.length - s.trimStart().length;
  const found: number[] = [];
  lines.forEach((line, i) => {
    let m = RM_AFTER.exec(line);
    let from = i + 1;
    const block = HOOK_BLOCK.exec(line);
    if (!m && block) {
      // A hook whose block (up to the `}` at its own indent) removes something.
      let end = i + 1;
      while (end < lines.length && !(indent(lines[end]!) === indent(line) && lines[end]!.trimStart().startsWith('}'))) end++;
      if (lines.slice(i + 1, end).some((l) => RM_CALL.test(l))) [m, from] = [block, end + 1];
    }
    if (!m) return;
    const later = new RegExp(`(?<![\\w.])${m[1]}\\.after\\(`);
    // The enclosing function (not an `if` block) ends at the `}` at its header's indent.
    let top = indent(line);
    for (let h = i - 1; h >= 0; h--) {
      const l = lines[h]!;
      if (!l.trim() || indent(l) >= top) continue;
      top = indent(l);
      if (/(=>|\bfunction\b.*\))[^=]*\{$/.test(l)) break;
    }
    for (let j = from; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trim() && indent(l) <= top && l.trimStart().startsWith('}')) break;
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
  const blockForm = ["test('x', async (t) => {", '  t.after(async () => {', '    await api.close();', '    await rm(dir);', '  });', '  t.after(close);', '});'].join('\n');
  assert.deepEqual(fifoCleanups(blockForm), [2]);
  const inIf = ['async function rig(t) {', '  if (!shared) {', '    t.after(() => rm(dir));', '  }', '  t.after(close);', '}'].join('\n');
  assert.deepEqual(fifoCleanups(inIf), [3]);
});

test('no test registers an rm cleanup with t.after and then another t.after (use cleanups(t): LIFO)', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const files = execFileSync('git', ['ls-files', '*.test.ts', '*.itest.ts'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const problems = files
    .filter((f) => f !== 'scripts/check-test-cleanup.test.ts')
    .flatMap((f) => fifoCleanups(readFileSync(join(root, f), 'utf8')).map((line) => `${f}:${line}`));
  assert.deepEqual(problems, [], 'these remove a dir in a t.after that runs before later t.after hooks (node:test runs them first in, first out); use cleanups(t)');
});
