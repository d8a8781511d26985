#!/usr/bin/env node
// Checks that nodelet's package graph is written down the same way everywhere. The layer table in
// eslint.config.js (LAYERS: what each package may import of ours) is the one source of truth; for
// every package this checks against it:
//
//   - package.json `dependencies` on @nodelet/*   (npm links the workspaces by them)
//   - tsconfig.json `references`                  (tsc -b builds in their order)
//   - the imports of <pkg>/src                     (a layer nothing imports is stale)
//
// and that the root package.json workspaces and tsconfig.json references list every package.
// Run by `make lint` and `npm run lint`; exits 1 naming each package and what disagrees.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SCOPE = '@nodelet/';
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"]@nodelet\/([a-z-]+)(?:\/[^'"]*)?['"]/g;

/** tsconfig files may carry comments. */
function readJsonc(file) {
  return JSON.parse(readFileSync(file, 'utf8').replace(/^\s*\/\/.*$/gm, ''));
}

function tsFiles(dir, out = []) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    // A package without src/ has no imports to check; the other checks still report it.
    return out;
  }
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The @nodelet packages `pkg`'s sources import (tests in src/ included: lint holds them to the same layers). */
export function importsOf(root, pkg) {
  const found = new Set();
  for (const f of tsFiles(join(root, pkg, 'src'))) {
    for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) if (m[1] !== pkg) found.add(m[1]);
  }
  return found;
}

const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
const fmt = (xs) => (xs.length ? xs.join(', ') : 'nothing');

/** Problems of the graph under `root` against `layers`, one message each (empty when consistent). */
export function checkPackageGraph(root, layers) {
  const problems = [];
  const pkgs = Object.keys(layers);
  for (const [pkg, allowed] of Object.entries(layers)) {
    for (const dep of allowed) if (!pkgs.includes(dep)) problems.push(`${pkg}: LAYERS names "${dep}", which is not a package`);
    const pj = JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8'));
    if (pj.name !== SCOPE + pkg) problems.push(`${pkg}/package.json: name is "${pj.name}", expected "${SCOPE}${pkg}"`);
    const deps = Object.keys(pj.dependencies ?? {}).filter((d) => d.startsWith(SCOPE)).map((d) => d.slice(SCOPE.length)).sort();
    if (!sameSet(deps, [...allowed].sort())) {
      problems.push(`${pkg}/package.json: dependencies on ${fmt(deps)}, but eslint.config.js LAYERS says ${fmt([...allowed].sort())}`);
    }
    const refs = (readJsonc(join(root, pkg, 'tsconfig.json')).references ?? []).map((r) => r.path.replace(/^\.\.\//, '').replace(/\/$/, '')).sort();
    if (!sameSet(refs, [...allowed].sort())) {
      problems.push(`${pkg}/tsconfig.json: references ${fmt(refs)}, but eslint.config.js LAYERS says ${fmt([...allowed].sort())}`);
    }
    const used = importsOf(root, pkg);
    const unused = allowed.filter((d) => !used.has(d));
    if (unused.length) problems.push(`${pkg}: LAYERS allows ${fmt(unused)}, but nothing in ${pkg}/src imports it: remove it from eslint.config.js, package.json and tsconfig.json`);
    const outside = [...used].filter((d) => !allowed.includes(d)).sort();
    if (outside.length) problems.push(`${pkg}/src imports ${fmt(outside)}, which LAYERS does not allow`);
  }
  problems.push(...cycles(layers));
  const top = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (!sameSet([...(top.workspaces ?? [])].sort(), [...pkgs].sort())) problems.push(`package.json: workspaces ${fmt(top.workspaces ?? [])} differ from the packages of LAYERS (${fmt(pkgs)})`);
  const rootRefs = (readJsonc(join(root, 'tsconfig.json')).references ?? []).map((r) => r.path);
  if (!sameSet([...rootRefs].sort(), [...pkgs].sort())) problems.push(`tsconfig.json: references ${fmt(rootRefs)} differ from the packages of LAYERS (${fmt(pkgs)})`);
  return problems;
}

/** Imports must go downward: a cycle in LAYERS is a mistake in the table itself. */
function cycles(layers) {
  const state = new Map();
  const found = [];
  const visit = (p, path) => {
    if (state.get(p) === 'done') return;
    if (state.get(p) === 'active') {
      found.push(`LAYERS has a cycle: ${[...path.slice(path.indexOf(p)), p].join(' → ')}`);
      return;
    }
    state.set(p, 'active');
    for (const d of layers[p] ?? []) visit(d, [...path, p]);
    state.set(p, 'done');
  };
  for (const p of Object.keys(layers)) visit(p, []);
  return found;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = new URL('..', import.meta.url).pathname;
  const { LAYERS } = await import(pathToFileURL(join(root, 'eslint.config.js')).href);
  const problems = checkPackageGraph(root, LAYERS);
  for (const p of problems) console.error(`package graph: ${p}`);
  if (problems.length) {
    console.error(`package graph: ${problems.length} mismatch(es); the layer table in eslint.config.js is the source of truth (docs/contributing.md, Layers)`);
    process.exit(1);
  }
}
