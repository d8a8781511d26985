import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..', '..');

/**
 * Loads a module in a fresh node, then runs 50 small functions 40 times each (what makes V8 give
 * them baseline code by default) and prints how many have it (`%ActiveTierIsSparkplug`).
 */
async function baselineCompiled(entry: string): Promise<number> {
  const probe = [
    'const fns = Array.from({ length: 50 }, (_, i) => new Function("a", `let s = ${i}; for (let j = 0; j < a; j++) s += j % 7; return s;`));',
    'for (let r = 0; r < 40; r++) for (const f of fns) f(100);',
    'const tier = new Function("f", "return %ActiveTierIsSparkplug(f)");',
    'process.stdout.write(String(fns.filter((f) => tier(f)).length));',
  ].join(' ');
  const script = `${entry ? `await import(${JSON.stringify(entry)});` : ''} ${probe} process.exit(0);`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', '--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
  return Number(stdout);
}

test('v8 flags: the agent entry turns baseline (Sparkplug) code off for its process', async () => {
  // Without the agent entry the same probe does get baseline code: the probe can see the tier.
  assert.ok((await baselineCompiled('')) > 0, 'baseline code by default');
  assert.equal(await baselineCompiled('./agent/src/main.ts'), 0);
});
