#!/usr/bin/env node
// Builds the web console (docs/console.md) with esbuild into build/console/: index.html,
// assets/app-<hash>.js|css and the hashed chunks loaded on demand (chunk-<hash>.js: xterm.js for the
// terminal, the YAML parser for Apply), which `nodelet server` serves at /ui/ (index.html
// revalidated, the hashed assets cached as immutable). Prints the size the files add, raw and
// gzipped: all of them, and the first load (index.html, the app's CSS, its script and the chunks
// that script imports statically), which is what a browser fetches before the first paint.
//
//   node console/build.mjs [--out <dir>] [--json]   (--json: the sizes as one JSON line, last)
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'build', 'console') }, json: { type: 'boolean', default: false } } });
const out = values.out;
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  // Code splitting: a dynamic import() becomes its own hashed chunk, fetched when first used.
  splitting: true,
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
const outputs = Object.entries(result.metafile.outputs);
const entry = outputs.find(([, o]) => o.entryPoint !== undefined && o.cssBundle !== undefined);
const js = entry && basename(entry[0]);
const css = entry && basename(entry[1].cssBundle);
if (!js || !css || outputs.filter(([p]) => p.endsWith('.css')).length !== 1) {
  throw new Error(`esbuild produced ${outputs.map(([p]) => basename(p)).join(', ')}: expected one entry script with one stylesheet`);
}
/** The first load: the entry script and what it imports statically, transitively (not the import() chunks). */
const firstLoad = new Set(['index.html', `assets/${css}`]);
const visit = (p) => {
  if (firstLoad.has(`assets/${basename(p)}`)) return;
  firstLoad.add(`assets/${basename(p)}`);
  for (const i of result.metafile.outputs[p].imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
};
visit(entry[0]);

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
${[...firstLoad].filter((n) => n.startsWith('assets/chunk-')).map((n) => `<link rel="modulepreload" href="${n}">\n`).join('')}<script type="module" src="assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The nodelet console needs JavaScript.</noscript>
</body>
</html>
`,
);

const sizes = { total: { bytes: 0, gzipped: 0 }, firstLoad: { bytes: 0, gzipped: 0 } };
const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
for (const f of walk(out)) {
  const body = readFileSync(f);
  // Level 9, as the server compresses them at start (control-plane/src/apiserver/console.ts).
  const gz = gzipSync(body, { level: 9 }).length;
  const name = relative(out, f);
  for (const k of firstLoad.has(name) ? ['total', 'firstLoad'] : ['total']) {
    sizes[k].bytes += body.length;
    sizes[k].gzipped += gz;
  }
  console.log(`  ${name.padEnd(32)} ${String(body.length).padStart(7)} B  ${String(gz).padStart(6)} B gzipped${firstLoad.has(name) ? '  (first load)' : ''}`);
}
console.log(`console: ${sizes.total.bytes} B (${sizes.total.gzipped} B gzipped) in ${relative(process.cwd(), out) || '.'}; first load ${sizes.firstLoad.bytes} B (${sizes.firstLoad.gzipped} B gzipped)`);
if (values.json) console.log(JSON.stringify(sizes));
