import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanStore } from './span-store.js';
import type { SpanRecord } from './span-record.js';

const span = (traceId: string, i: number): SpanRecord => ({ traceId, spanId: String(i).padStart(16, '0'), name: `s${i}`, startMs: i, endMs: i + 1, service: 'x', scope: 'y', attributes: {} });

test('the store keeps at most maxTraces traces, dropping the oldest first', () => {
  const s = new SpanStore({ maxTraces: 3, maxSpansPerTrace: 10 });
  for (let t = 0; t < 5; t++) for (let i = 0; i < 2; i++) s.add(span(`t${t}`, i));
  assert.equal(s.traceCount, 3);
  assert.deepEqual(s.get('t0'), []);
  assert.deepEqual(s.get('t1'), []);
  assert.equal(s.get('t4').length, 2);
  assert.equal(s.dropped, 4);
});

test('a full trace drops later spans and counts them; get returns a copy', () => {
  const s = new SpanStore({ maxTraces: 2, maxSpansPerTrace: 3 });
  for (let i = 0; i < 5; i++) s.add(span('t', i));
  const got = s.get('t');
  assert.deepEqual(got.map((x) => x.name), ['s0', 's1', 's2']);
  assert.equal(s.dropped, 2);
  got.pop();
  assert.equal(s.get('t').length, 3);
});
