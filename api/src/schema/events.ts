/** Schema of events.k8s.io/v1 Event (stored as, and converted to and from, the core v1 Event). */
import { definitions, int32, kind, obj, ref, str, type JsonSchema } from './dsl.js';

export const EVENTS_SCHEMAS: Record<string, JsonSchema> = definitions('events', {
  Event: kind('events.k8s.io/v1:Event', 'A report of something that happened to an object; the same objects as core v1 Events, in the newer shape.', {
    eventTime: ref('meta.MicroTime', 'When it first happened. Required.'),
    series: ref('events.EventSeries', 'Data about a series of the same event.'),
    reportingController: str('The controller that reported it, e.g. `kubernetes.io/kubelet`. Required.'),
    reportingInstance: str('The instance of that controller, e.g. a node name. Required, at most 128 characters.'),
    action: str('What was done, or failed. Required, at most 128 characters.'),
    reason: str('Why, in CamelCase. Required, at most 128 characters.'),
    regarding: ref('core.ObjectReference', 'The object the event is about (core v1 `involvedObject`).'),
    related: ref('core.ObjectReference', 'A second object involved.'),
    note: str('Human-readable description, at most 1 KiB (core v1 `message`).'),
    type: str('`Normal` or `Warning`.'),
    deprecatedSource: ref('core.EventSource', 'Core v1 `source`; must be unset on create.'),
    deprecatedFirstTimestamp: ref('meta.Time', 'Core v1 `firstTimestamp`; must be unset on create.'),
    deprecatedLastTimestamp: ref('meta.Time', 'Core v1 `lastTimestamp`; must be unset on create.'),
    deprecatedCount: int32('Core v1 `count`; must be unset on create.'),
  }, { required: ['eventTime'] }),
  EventSeries: obj('A repeated event.', {
    count: int32('Occurrences so far (at least 2).'),
    lastObservedTime: ref('meta.MicroTime', 'When it was last seen.'),
  }, { required: ['count', 'lastObservedTime'] }),
});
