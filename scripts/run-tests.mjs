#!/usr/bin/env node
// Finds and runs nodelet's tests with node's test runner (tsx for TypeScript, the `source`
// export condition so packages resolve to their src/ without a build).
//
//   node scripts/run-tests.mjs unit          # **/*.test.ts, in parallel
//   node scripts/run-tests.mjs integration   # **/test/integration/*.itest.ts and test/e2e/*.itest.ts, one file at a time
//   node scripts/run-tests.mjs all
//   --long (or NODELET_TEST_LONG=1) also runs the integration files marked long (see LONG_MARK)
//   extra args after the kind are passed to node --test (e.g. --test-name-pattern=cni)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const [kind = 'all', ...rest] = process.argv.slice(2);
const SKIP = new Set(['node_modules', 'dist', '.git', 'build', '.state']);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else out.push(relative(root, p));
  }
  return out;
}

const files = walk(root, []);
const unit = files.filter((f) => f.endsWith('.test.ts')).sort();
const integration = files.filter((f) => f.endsWith('.itest.ts')).sort();
const only = rest.filter((a) => !a.startsWith('-'));
const long = rest.includes('--long') || process.env.NODELET_TEST_LONG === '1';
const flags = rest.filter((a) => a.startsWith('-') && a !== '--long');
const pick = (list) => (only.length ? list.filter((f) => only.some((o) => f.includes(o))) : list);

// An integration file whose head holds this line is left out of the default run (`make test`, what CI
// runs) and runs with --long (`make test-long`): slow cases whose ground the default files already
// cover. Naming a file on the command line runs it either way.
const LONG_MARK = '// nodelet-test: long';
const isLong = (f) => readFileSync(join(root, f), 'utf8').slice(0, 4096).includes(LONG_MARK);
function tier(list) {
  if (long || only.length) return list;
  const skipped = list.filter(isLong);
  if (skipped.length) console.log(`# left out (long; make test-long runs them): ${skipped.join(', ')}`);
  return list.filter((f) => !skipped.includes(f));
}

// --test-timeout bounds any single test (integration ones included) and, in Node 20's runner, each
// file as a whole too (docs/contributing.md, Tests: a unit file has 60 s in all). There is no --test-force-exit:
// each file's process must end by itself once its tests are done, so a handle a test leaves open
// (a server, a socket, a timer) hangs the run and is found, not hidden (docs/contributing.md, Tests).
//
// Besides node's own reporter (spec on a terminal, TAP otherwise, as node picks by default), a
// second reporter writes each skipped or todo test to a file. Under CI a skipped test fails the
// run: node's runner exits 0 with `# skipped N`, so a tool missing on the CI machine would
// otherwise turn a suite into a silent pass. Locally the skips are listed and the run passes.
const skipsDir = mkdtempSync(join(tmpdir(), 'nodelet-test-skips-'));
const skipped = [];
function run(list, concurrency, env, timeoutMs) {
  if (list.length === 0) return 0;
  const skipsFile = join(skipsDir, `${skipped.length}-${Date.now()}.jsonl`);
  const reporters = flags.some((f) => f.startsWith('--test-reporter')) ? [] : [
    `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts/test-skips-reporter.mjs')}`, `--test-reporter-destination=${skipsFile}`,
  ];
  const args = ['--conditions=source', '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...reporters, ...flags, ...list];
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (reporters.length) {
    let text = '';
    try {
      text = readFileSync(skipsFile, 'utf8');
    } catch (err) {
      // The reporter creates the file on its first line only: no file is no skip.
      if (err.code !== 'ENOENT') throw err;
    }
    for (const line of text.split('\n')) if (line) skipped.push(JSON.parse(line));
  }
  return r.status ?? 1;
}

let rc = 0;
if (kind === 'unit' || kind === 'all') rc = run(pick(unit), 2, {}, 60_000) || rc;
if (kind === 'integration' || kind === 'all') rc = run(tier(pick(integration)), 1, { AGENT_IT: '1' }, 600_000) || rc;
rmSync(skipsDir, { recursive: true, force: true });
if (skipped.length) {
  const onCi = !!process.env.CI && process.env.CI !== 'false';
  console.log(`# ${skipped.length} test(s) did not run${onCi ? ' — on CI this fails the run: install what they need (make deps) or fix the test' : ''}:`);
  for (const s of skipped) console.log(`#   ${relative(root, s.file ?? '?')}: ${s.name} — ${s.reason}`);
  if (onCi) rc = rc || 1;
}
process.exit(rc);
