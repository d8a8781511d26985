// The journey view's pure parts: the trace id from a pod's traceparent annotation, and the merge of
// the API server's and the agent's span lists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SpanRecord } from '@nodelet/api/tracing';
import { coveredMs, mergeSpans, traceIdOf } from '../src/journey.js';

const T = '0af7651916cd43dd8448eb211c80319c';

test('the trace id comes from a well-formed traceparent annotation only', () => {
  const pod = (v?: string) => ({ metadata: { name: 'p', ...(v === undefined ? {} : { annotations: { 'trace.nodelet.io/traceparent': v } }) } });
  assert.equal(traceIdOf(pod(`00-${T}-b7ad6b7169203331-01`)), T);
  assert.equal(traceIdOf(pod()), undefined);
  assert.equal(traceIdOf(pod(`00-${T.toUpperCase()}-b7ad6b7169203331-01`)), undefined);
  assert.equal(traceIdOf(pod(`00-${T}-b7ad6b71692033-01`)), undefined);
});

test('spans from both sources merge by span id, ordered by start (the enclosing span first)', () => {
  const s = (spanId: string, startMs: number, endMs: number, name = spanId): SpanRecord => ({ traceId: T, spanId, name, startMs, endMs, service: 'x', scope: 'y', attributes: {} });
  const merged = mergeSpans([s('root', 0, 100), s('create', 0, 5)], [s('sync', 20, 60), s('create', 0, 5, 'create again')]);
  assert.deepEqual(merged.map((m) => m.name), ['root', 'create again', 'sync']);
});

test("a stage's time is what its spans cover: nested and overlapping spans count once, gaps not at all", () => {
  const s = (startMs: number, endMs: number): SpanRecord => ({ traceId: T, spanId: `${startMs}-${endMs}`, name: 'x', startMs, endMs, service: 'x', scope: 'y', attributes: {} });
  // The agent's shape: admit, then a sync holding the sandbox (with CNI inside) and the start.
  assert.equal(coveredMs([s(68, 71), s(81, 841), s(134, 558), s(439, 478), s(729, 840), s(846, 854)]), 3 + 760 + 8);
  assert.equal(coveredMs([s(10, 20), s(15, 30)]), 20);
  assert.equal(coveredMs([]), 0);
});
