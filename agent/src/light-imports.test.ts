import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * Every module the agent entry loads: ESM through the resolve hook, CommonJS (which the hook does
 * not see on Node 20) from the require cache. Loaded once for all the tests below.
 */
let agentModules: Promise<string[]> | undefined;
function loadedByAgent(): Promise<string[]> {
  const script = [
    "await import('./agent/src/main.ts');",
    "const { createRequire } = await import('node:module');",
    "for (const f of Object.keys(createRequire(import.meta.url).cache)) process.stderr.write('LOADED file://' + f + '\\n');",
  ].join(' ');
  agentModules ??= promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', '--import', HOOK, '--input-type=module', '-e', script], {
    cwd: root,
    maxBuffer: 64 * 2 ** 20,
  }).then(({ stderr }) => stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length)));
  return agentModules;
}

test('light imports: the agent entry loads none of the API server schema, defaulting or validation modules of @nodelet/api', async () => {
  const loaded = await loadedByAgent();
  // The hook must see the agent's own modules, or an empty list would pass.
  assert.ok(loaded.some((u) => u.endsWith('/agent/src/agent.ts')), 'the hook saw the agent load');
  assert.ok(loaded.some((u) => u.endsWith('/api/src/agent.ts')), 'the agent loaded @nodelet/api/agent');
  const server = loaded.filter((u) => SERVER_ONLY.test(u)).map((u) => u.replace(/^.*\/api\/src\//, ''));
  assert.deepEqual(server, []);
});

test('light imports: the agent entry loads no image build, archive or registry code, no OTLP exporter and no cron scheduler unless configured', async () => {
  const loaded = await loadedByAgent();
  assert.ok(loaded.some((u) => u.endsWith('/oci/src/reference.ts')), 'the agent loaded image references (its keyring)');
  assert.ok(loaded.some((u) => u.includes('/node_modules/@opentelemetry/sdk-trace-base/')), 'the require cache was read');
  const unused = loaded.filter((u) => /\/oci\/src\/(?!reference\.ts)|\/node_modules\/(tar|node-cron|@opentelemetry\/(exporter-trace-otlp-http|otlp-transformer|sdk-metrics))\//.test(u));
  assert.deepEqual(unused.map((u) => u.replace(/^.*\/(oci\/src|node_modules)\//, '$1/')), []);
});

test('light imports: of the generated CRI modules the agent loads only the enums, not the ~145 modules of types alone', async () => {
  const loaded = await loadedByAgent();
  const gen = loaded.filter((u) => u.includes('/proto/src/gen/runtime/v1/')).map((u) => u.replace(/^.*\/runtime\/v1\//, ''));
  assert.ok(gen.includes('ContainerState.ts'), 'an enum with values is still loaded');
  assert.deepEqual(gen.filter((f) => f.endsWith('Request.ts') || f.endsWith('Response.ts')), []);
  assert.ok(gen.length <= 10, `${gen.length} generated modules loaded`);
});

/** `compilerOptions.removeComments` of a package's tsconfig.json, following its `extends` chain. */
function removesComments(tsconfig: string): boolean | undefined {
  const c = JSON.parse(readFileSync(tsconfig, 'utf8')) as { extends?: string; compilerOptions?: { removeComments?: boolean } };
  return c.compilerOptions?.removeComments ?? (c.extends ? removesComments(join(dirname(tsconfig), c.extends)) : undefined);
}

test('light imports: every workspace package the agent entry loads is built without comments (V8 keeps each ES module source in the heap)', async () => {
  const loaded = await loadedByAgent();
  const prefix = pathToFileURL(root).href + '/';
  const packages = [...new Set(loaded.filter((u) => u.startsWith(prefix) && !u.includes('/node_modules/')).map((u) => u.slice(prefix.length).split('/')[0]!))].filter((p) => p !== 'bench');
  assert.ok(packages.includes('agent') && packages.includes('api') && packages.includes('cri-client'), `packages seen: ${packages.join(', ')}`);
  assert.deepEqual(packages.filter((p) => removesComments(join(root, p, 'tsconfig.json')) !== true), []);
});
