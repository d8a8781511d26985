import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..', '..');

/** A module resolve hook that prints every URL the process loads (one `LOADED <url>` line each). */
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }",
)}));
`)}`;

/**
 * The modules of `@nodelet/api` that are the API server's, not the agent's: the schema tables,
 * defaulting and whole-object validation of every kind, quota, the HPA conversions, and the
 * package root that loads them all. (`validation/` leaf checks on names and paths are the agent's.)
 */
const SERVER_ONLY = /\/api\/src\/(index\.ts|schema\/|defaults\/|quota\/|autoscaling\/|validation\/(?!field-error|names|paths|volumes)[^/]+$)/;

test('light imports: the agent entry loads none of the API server schema, defaulting or validation modules of @nodelet/api', async () => {
  const script = "await import('./agent/src/main.ts')";
  const { stderr } = await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', '--import', HOOK, '--input-type=module', '-e', script], {
    cwd: root,
    maxBuffer: 64 * 2 ** 20,
  });
  const loaded = stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length));
  // The hook must see the agent's own modules, or an empty list would pass.
  assert.ok(loaded.some((u) => u.endsWith('/agent/src/agent.ts')), 'the hook saw the agent load');
  assert.ok(loaded.some((u) => u.endsWith('/api/src/agent.ts')), 'the agent loaded @nodelet/api/agent');
  const server = loaded.filter((u) => SERVER_ONLY.test(u)).map((u) => u.replace(/^.*\/api\/src\//, ''));
  assert.deepEqual(server, []);
});
