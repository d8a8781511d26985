export * from './recorder.js';
export { eventFromEventsV1, eventToEventsV1 } from './conversion.js';
