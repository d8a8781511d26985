// @nodelet/api/tracing: the pod journey's trace context, span records, store and tracer (docs/tracing.md).
export * from './traceparent.js';
export * from './span-record.js';
export * from './span-store.js';
export * from './journey-tracer.js';
export * from './names.js';
