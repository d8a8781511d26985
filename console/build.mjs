#!/usr/bin/env node
// Builds the web console (docs/console.md) with esbuild into build/console/: index.html and
// assets/app-<hash>.js|css, which `nodelet server` serves at /ui/ (index.html revalidated,
// the hashed assets cached as immutable). Prints the size the files add, raw and gzipped.
//
//   node console/build.mjs [--out <dir>]
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'build', 'console') } } });
const out = values.out;
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['chrome111', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((n) => n.endsWith('.js'));
const css = outputs.find((n) => n.endsWith('.css'));
if (!js || !css) throw new Error(`esbuild produced ${outputs.join(', ')}: expected one .js and one .css`);

// No inline script or style: the Content-Security-Policy allows only files from this origin.
writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>nodelet console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/${css}">
<script type="module" src="assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The nodelet console needs JavaScript.</noscript>
</body>
</html>
`,
);

let raw = 0;
let gz = 0;
const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
for (const f of walk(out)) {
  const body = readFileSync(f);
  raw += body.length;
  gz += gzipSync(body, { level: 9 }).length;
  console.log(`  ${relative(out, f).padEnd(32)} ${String(body.length).padStart(7)} B  ${String(gzipSync(body, { level: 9 }).length).padStart(6)} B gzipped`);
}
console.log(`console: ${raw} B (${gz} B gzipped) in ${relative(process.cwd(), out) || '.'}`);
