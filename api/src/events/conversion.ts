/**
 * events.k8s.io/v1 Event ⇄ core v1 Event, field for field as upstream's conversion through the
 * internal type (pkg/apis/events/v1/conversion.go): note ⇄ message, regarding ⇄ involvedObject,
 * reportingController ⇄ reportingComponent, deprecatedSource ⇄ source,
 * deprecatedFirstTimestamp/LastTimestamp/Count ⇄ firstTimestamp/lastTimestamp/count; eventTime,
 * series, related, action, reason, reportingInstance and type are the same in both. Both groups
 * are served from one storage, which holds the core form.
 */
type Obj = Record<string, unknown>;

/** events.k8s.io/v1 field → core v1 field, for the fields whose names differ. */
const RENAMED: ReadonlyArray<readonly [string, string]> = [
  ['note', 'message'],
  ['regarding', 'involvedObject'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];
const SAME = ['metadata', 'eventTime', 'series', 'related', 'action', 'reason', 'reportingInstance', 'type'];

function convert(from: Obj, apiVersion: string, pairs: ReadonlyArray<readonly [string, string]>): Obj {
  const out: Obj = { kind: 'Event', apiVersion };
  for (const k of SAME) if (from[k] !== undefined) out[k] = from[k];
  for (const [a, b] of pairs) if (from[a] !== undefined) out[b] = from[a];
  return out;
}

/** A core v1 Event in its events.k8s.io/v1 form. */
export function eventToEventsV1(core: Obj): Obj {
  return convert(core, 'events.k8s.io/v1', RENAMED.map(([a, b]) => [b, a] as const));
}

/** An events.k8s.io/v1 Event in its core v1 form. */
export function eventFromEventsV1(ev: Obj): Obj {
  return convert(ev, 'v1', RENAMED);
}
