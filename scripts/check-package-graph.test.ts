import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error -- a plain .mjs script without type declarations
import { checkPackageGraph } from './check-package-graph.mjs';

const check = checkPackageGraph as (root: string, layers: Record<string, string[]>) => string[];

/** A two-package tree: `base`, and `app` declaring `deps`/`refs` and importing `imports`. */
function tree(o: { deps: string[]; refs: string[]; imports: string[] }): string {
  const root = mkdtempSync(join(tmpdir(), 'graph-'));
  const pkg = (name: string, deps: string[], refs: string[], imports: string[]): void => {
    mkdirSync(join(root, name, 'src'), { recursive: true });
    writeFileSync(join(root, name, 'package.json'), JSON.stringify({ name: `@nodelet/${name}`, dependencies: Object.fromEntries(deps.map((d) => [`@nodelet/${d}`, '0.1.0'])) }));
    writeFileSync(join(root, name, 'tsconfig.json'), `// comment\n${JSON.stringify({ references: refs.map((r) => ({ path: `../${r}` })) })}`);
    writeFileSync(join(root, name, 'src', 'index.ts'), imports.map((i) => `import { x } from '@nodelet/${i}';\n`).join(''));
  };
  pkg('base', [], [], []);
  pkg('app', o.deps, o.refs, o.imports);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ workspaces: ['base', 'app'] }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ references: [{ path: 'base' }, { path: 'app' }] }));
  return root;
}

test('a consistent graph has no problems', (t) => {
  const root = tree({ deps: ['base'], refs: ['base'], imports: ['base'] });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.deepEqual(check(root, { base: [], app: ['base'] }), []);
});

test('each disagreement is named with its package', (t) => {
  const root = tree({ deps: [], refs: [], imports: [] });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const problems = check(root, { base: [], app: ['base'] });
  assert.equal(problems.length, 3);
  assert.match(problems[0]!, /^app\/package\.json: dependencies on nothing, but eslint\.config\.js LAYERS says base/);
  assert.match(problems[1]!, /^app\/tsconfig\.json: references nothing/);
  assert.match(problems[2]!, /^app: LAYERS allows base, but nothing in app\/src imports it/);
});

test('an import outside the layer and a cycle are reported', (t) => {
  const root = tree({ deps: [], refs: [], imports: ['base'] });
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.deepEqual(check(root, { base: [], app: [] }), ['app/src imports base, which LAYERS does not allow']);
  assert.ok(check(root, { base: ['app'], app: ['base'] }).includes('LAYERS has a cycle: base → app → base'));
});
