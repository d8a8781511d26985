import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTraceparent, isTraceId, parseTraceparent, podTraceParent, TRACEPARENT_ANNOTATION } from './traceparent.js';

const T = '4bf92f3577b34da6a3ce929d0e0e4736';
const S = '00f067aa0ba902b7';

test('a version-00 traceparent parses and formats back to itself', () => {
  const v = `00-${T}-${S}-01`;
  assert.deepEqual(parseTraceparent(v), { traceId: T, spanId: S, flags: 1 });
  assert.equal(formatTraceparent(parseTraceparent(v)!), v);
});

test('invalid traceparents are refused, not trusted', () => {
  for (const bad of [
    '', 'garbage', `00-${T}-${S}`, `00-${T.toUpperCase()}-${S}-01`, `00-${'0'.repeat(32)}-${S}-01`, `00-${T}-${'0'.repeat(16)}-01`,
    `ff-${T}-${S}-01`, `00-${T}-${S}-01-extra`, `00-${T}x-${S}-01`, ` 00-${T}-${S}-01`, 42, undefined, null, { traceId: T },
  ]) assert.equal(parseTraceparent(bad), undefined, `accepted ${JSON.stringify(bad)}`);
});

test('a later version is read by its first four fields', () => {
  assert.deepEqual(parseTraceparent(`01-${T}-${S}-00-what-comes-next`), { traceId: T, spanId: S, flags: 0 });
});

test('podTraceParent reads the annotation; isTraceId checks the debug path element', () => {
  assert.equal(podTraceParent({ metadata: { annotations: { [TRACEPARENT_ANNOTATION]: `00-${T}-${S}-01` } } })?.traceId, T);
  assert.equal(podTraceParent({ metadata: {} }), undefined);
  assert.ok(isTraceId(T));
  assert.ok(!isTraceId('0'.repeat(32)));
  assert.ok(!isTraceId('../etc/passwd'));
});
