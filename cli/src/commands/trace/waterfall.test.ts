import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLValidator } from 'fast-xml-parser';
import type { SpanRecord } from '@nodelet/api/tracing';
import { buildWaterfall } from './waterfall.js';
import { renderWaterfallText } from './render-text.js';
import { renderWaterfallSvg } from './render-svg.js';

const T = 'a'.repeat(32);
let n = 0;
function span(name: string, parent: string | undefined, start: number, end: number, scope = 'agent', extra: Partial<SpanRecord> = {}): SpanRecord {
  return { traceId: T, spanId: String(++n).padStart(16, '0'), ...(parent ? { parentSpanId: parent } : {}), name, startMs: 1000 + start, endMs: 1000 + end, service: 's', scope, attributes: {}, ...extra };
}

/** A journey of 500 ms: steps with waits between them, a sync with children, the status write ending after the root. */
function journey(): SpanRecord[] {
  const root = span('pod journey', undefined, 0, 500, 'apiserver');
  const sync = span('agent.sync', root.spanId, 120, 300);
  const sandbox = span('agent.sandbox', sync.spanId, 125, 220);
  return [
    root,
    span('api.create', root.spanId, 0, 10, 'apiserver'),
    span('scheduler.queue', root.spanId, 14, 20, 'scheduler'),
    span('scheduler.schedule', root.spanId, 20, 21, 'scheduler'),
    span('scheduler.bind', root.spanId, 21, 30, 'scheduler'),
    span('agent.admit', root.spanId, 35, 36),
    sync,
    sandbox,
    span('cni.add', sandbox.spanId, 150, 200),
    span('agent.container.start', sync.spanId, 250, 290, 'agent', { attributes: { 'k8s.container.name': 'web' } }),
    span('agent.observe', root.spanId, 300, 420),
    span('agent.probes', root.spanId, 420, 480),
    span('agent.status', root.spanId, 480, 501),
  ];
}

test('top-level steps and computed waits tile the journey; children nest under their step', () => {
  const w = buildWaterfall(T, journey());
  assert.equal(w.complete, true);
  assert.equal(w.endMs - w.startMs, 500);
  const top = w.rows.filter((r) => r.depth === 0);
  assert.deepEqual(top.map((r) => r.name), [
    'api.create', 'waiting for the scheduler (watch)', 'scheduler.queue', 'scheduler.schedule', 'scheduler.bind',
    'waiting for the agent (watch)', 'agent.admit', 'waiting for the pod worker', 'agent.sync', 'agent.observe', 'agent.probes', 'agent.status',
  ]);
  // Each top-level row starts where the one before ended.
  for (let i = 1; i < top.length; i++) assert.equal(top[i]!.startMs, Math.min(top[i - 1]!.endMs, w.endMs));
  assert.equal(w.topLevelSumMs, 500);
  assert.equal(w.overlapMs, 0);
  const names = w.rows.map((r) => `${r.depth}:${r.name}`);
  assert.deepEqual(names.slice(names.indexOf('0:agent.sync'), names.indexOf('0:agent.sync') + 4), ['0:agent.sync', '1:agent.sandbox', '2:cni.add', '1:agent.container.start']);
});

test('overlapping top-level steps are reported, not hidden', () => {
  const spans = journey();
  spans.push(span('agent.admit', spans[0]!.spanId, 25, 40));
  const w = buildWaterfall(T, spans);
  assert.ok(w.overlapMs > 0);
  assert.equal(w.topLevelSumMs - w.overlapMs, 500);
});

test('without a root the journey is marked incomplete and spans still show', () => {
  const w = buildWaterfall(T, journey().slice(1));
  assert.equal(w.complete, false);
  assert.ok(w.rows.some((r) => r.name === 'agent.sandbox'));
  assert.match(renderWaterfallText(w, 'pod default/p'), /incomplete/);
});

test('the text waterfall has a row per step with offset, duration and bar, and names both ends', () => {
  const w = buildWaterfall(T, journey());
  const text = renderWaterfallText(w, 'pod default/p on n1', { created: '2026-12-03T08:00:00Z', ready: '2026-12-03T08:00:01Z' });
  const lines = text.split('\n');
  const sandbox = lines.find((l) => l.includes('agent.sandbox'))!;
  assert.match(sandbox, /^\s+125\.0 ms\s+95\.0 ms\s+ {2}agent\.sandbox/);
  assert.match(sandbox, /\|[ ▒]+\|$/);
  assert.match(text, /~ waiting for the agent \(watch\)/);
  assert.match(text, /agent\.container\.start \(web\)/);
  assert.match(text, /top-level steps and waits: {2}500\.0 ms/);
  assert.match(text, /journey: {20}500\.0 ms {2}\(from the API server receiving the create request to it storing the status that made the pod Ready\)/);
  assert.match(text, /pod timestamps: {13}1 s {2}\(creationTimestamp .* 1 s resolution\)/);
});

test('the SVG is well-formed, escapes names and stacks one panel per journey', () => {
  const spans = journey();
  spans.push(span('odd <name> & "quotes"', spans[0]!.spanId, 490, 495));
  const w = buildWaterfall(T, spans);
  const svg = renderWaterfallSvg([{ title: 'p50 pod <a>', waterfall: w }, { title: 'p99 pod', waterfall: w }]);
  assert.equal(XMLValidator.validate(svg), true);
  assert.match(svg, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /odd &lt;name&gt; &amp; &quot;quotes&quot;/);
  assert.equal((svg.match(/class="title"/g) ?? []).length, 2);
  assert.equal((svg.match(/<rect x=/g) ?? []).length, 2 * w.rows.length);
});
