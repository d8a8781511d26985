import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventFromEventsV1, eventToEventsV1 } from './conversion.js';
import { validateEventsV1Create, validateEventsV1Update } from '../validation/events.js';

const core = {
  apiVersion: 'v1', kind: 'Event',
  metadata: { name: 'e', namespace: 'ns' },
  involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns' },
  related: { kind: 'Node', name: 'n' },
  reason: 'Pulled', message: 'pulled the image', type: 'Normal', action: 'Pull',
  eventTime: '2026-01-01T00:00:00.000000Z', series: { count: 3, lastObservedTime: '2026-01-01T00:01:00.000000Z' },
  reportingComponent: 'kubernetes.io/kubelet', reportingInstance: 'node-a',
  source: { component: 'kubelet', host: 'node-a' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:01:00Z', count: 3,
};

test('events.k8s.io/v1 ⇄ core v1: every field, both ways', () => {
  const v1 = eventToEventsV1(core);
  assert.deepEqual(v1, {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: core.metadata,
    regarding: core.involvedObject, related: core.related, reason: 'Pulled', note: 'pulled the image', type: 'Normal', action: 'Pull',
    eventTime: core.eventTime, series: core.series, reportingController: 'kubernetes.io/kubelet', reportingInstance: 'node-a',
    deprecatedSource: core.source, deprecatedFirstTimestamp: core.firstTimestamp, deprecatedLastTimestamp: core.lastTimestamp, deprecatedCount: 3,
  });
  assert.deepEqual(eventFromEventsV1(v1), core);
});

test('events.k8s.io/v1 strict validation on create; immutability on update', () => {
  const fresh = { ...core, source: undefined, firstTimestamp: undefined, lastTimestamp: undefined, count: undefined };
  assert.deepEqual(validateEventsV1Create(fresh), []);
  const msgs = validateEventsV1Create({ metadata: { namespace: 'ns' }, involvedObject: { namespace: 'ns' }, count: 2, series: { count: 1 } }).map((e) => `${e.field}: ${e.message}`);
  assert.deepEqual(msgs, [
    'reportingController: Required value', 'reportingInstance: Required value', 'action: Required value', 'reason: Required value',
    'series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value', 'eventTime: Required value',
    'type: Invalid value: "": has invalid value: ', 'count: Invalid value: "": needs to be unset',
  ]);
  assert.deepEqual(validateEventsV1Update({ ...fresh, series: { count: 4, lastObservedTime: 'x' } }, fresh), []);
  assert.deepEqual(validateEventsV1Update({ ...fresh, message: 'changed' }, fresh).map((e) => e.field), ['message']);
});
