// Redraws bench/results/<name>.svg from every bench/results/<name>.json written by
// writeBenchResults (bench/lib/results.ts); files in another shape are skipped and named.
//
//   node --conditions=source --import tsx bench/draw.ts [name…]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR, type BenchResults } from './lib/results.js';
import { renderBenchSvg } from './lib/svg.js';

const only = process.argv.slice(2);
for (const file of readdirSync(RESULTS_DIR).filter((f) => f.endsWith('.json')).sort()) {
  const name = file.slice(0, -'.json'.length);
  if (only.length && !only.includes(name)) continue;
  const doc = JSON.parse(readFileSync(join(RESULTS_DIR, file), 'utf8')) as Partial<BenchResults>;
  if (!Array.isArray(doc.figures) || !doc.machine || !doc.date) {
    console.log(`${file}: not a writeBenchResults document (no figures), skipped`);
    continue;
  }
  writeFileSync(join(RESULTS_DIR, `${name}.svg`), renderBenchSvg(doc as BenchResults));
  console.log(`${name}.svg: ${doc.figures.length} figures`);
}
