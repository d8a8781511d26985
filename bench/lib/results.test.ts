import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { XMLValidator } from 'fast-xml-parser';
import { targetLine, targetMet, writeBenchResults, type BenchFigure } from './results.js';

const figures: BenchFigure[] = [
  { group: 'sqlite', name: 'create p99', unit: 'ms', value: 18.2, baseline: { label: 'store floor', value: 9.1 }, target: { op: '<=', value: 25 } },
  { group: 'sqlite', name: 'creates/s', unit: '/s', value: 1200, target: { op: '>=', value: 1500 } },
  { group: 'etcd <&>', name: 'create p50', unit: 'ms', value: 20 },
];

test('targets: <= and >= judged, a figure without a target has no line', () => {
  assert.equal(targetMet(figures[0]!), true);
  assert.equal(targetMet(figures[1]!), false);
  assert.equal(targetMet(figures[2]!), undefined);
  assert.equal(targetLine(figures[0]!), 'sqlite create p99 ≤ 25 ms: met (18.2 ms)');
  assert.equal(targetLine(figures[1]!), 'sqlite creates/s ≥ 1500 /s: missed (1200 /s)');
  assert.equal(targetLine(figures[2]!), undefined);
});

test('writeBenchResults writes the JSON document and a well-formed SVG with every figure', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-results-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = writeBenchResults('demo', figures, { dir, svg: true, details: { pods: 1000 } });
  const doc = JSON.parse(readFileSync(out.json, 'utf8'));
  assert.equal(doc.bench, 'demo');
  assert.deepEqual(doc.figures, figures);
  assert.deepEqual(doc.details, { pods: 1000 });
  assert.ok(doc.machine.cpus >= 1);
  assert.deepEqual(out.targetLines.length, 2);
  const svg = readFileSync(out.svg!, 'utf8');
  assert.equal(XMLValidator.validate(svg), true);
  for (const f of figures) assert.ok(svg.includes(`>${f.name}<`), f.name);
  assert.ok(svg.includes('etcd &lt;&amp;&gt;'), 'group titles are escaped');
  assert.ok(svg.includes('store floor: 9.1 ms'));
});
