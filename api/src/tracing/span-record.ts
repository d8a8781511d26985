/**
 * One finished span as the debug endpoints serve it and `nodelet trace pod` reads it: plain JSON,
 * times in epoch milliseconds (fractions allowed), so the CLI needs no OpenTelemetry library.
 */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  /** Absent for a trace's root (or a span whose parent is outside nodelet, e.g. a client's). */
  parentSpanId?: string;
  name: string;
  /** Epoch ms. */
  startMs: number;
  endMs: number;
  /** The process that recorded it (OpenTelemetry `service.name`): `nodelet-server` or `nodelet-agent`. */
  service: string;
  /** Its component (the instrumentation scope): apiserver, scheduler, agent. */
  scope: string;
  attributes: Record<string, string | number | boolean>;
  /** Set when the step failed; the message says why. */
  error?: string;
}

/** The body of `GET /debug/nodelet/traces/<traceId>` on the API server and the node API. */
export interface TraceSpansResponse {
  traceId: string;
  spans: SpanRecord[];
}
