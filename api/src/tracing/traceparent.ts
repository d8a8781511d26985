/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header) as the
 * pod carries it in {@link TRACEPARENT_ANNOTATION}: `00-<trace-id>-<parent-id>-<flags>`, lower-case
 * hex, trace id of 32 digits and parent id of 16, neither all zeros. The API server writes one on
 * every new pod; a client may set its own, which the server keeps only when it parses here.
 */

/** The pod annotation that carries the pod journey's trace context (docs/tracing.md). */
export const TRACEPARENT_ANNOTATION = 'trace.nodelet.io/traceparent';

export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** 16 lower-case hex digits, not all zero: the span the pod's steps are children of. */
  spanId: string;
  /** Trace flags; bit 0 is "sampled". */
  flags: number;
}

const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version may append fields after a dash; its first four fields read as version 00's. */
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Parses a traceparent value; undefined when it is not a valid one (wrong length or case, version
 * ff, an all-zero id, or anything but a string). Never throws: the value comes from clients.
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length > 256) return undefined;
  let m = VERSION_00.exec(value);
  let traceId: string, spanId: string, flags: string;
  if (m) [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  else {
    m = LATER_VERSION.exec(value);
    if (!m || m[1] === '00' || m[1] === 'ff') return undefined;
    [, , traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  }
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, flags: parseInt(flags, 16) };
}

/** The version-00 header value of `tp`. */
export function formatTraceparent(tp: TraceParent): string {
  return `00-${tp.traceId}-${tp.spanId}-${(tp.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The pod's trace context from its annotation, when it has a valid one. */
export function podTraceParent(pod: { metadata?: { annotations?: Record<string, string> | null } }): TraceParent | undefined {
  return parseTraceparent(pod.metadata?.annotations?.[TRACEPARENT_ANNOTATION]);
}

/** True for a 32-digit lower-case hex trace id that is not all zero (what the debug endpoints accept). */
export function isTraceId(s: string): boolean {
  return /^[0-9a-f]{32}$/.test(s) && s !== ZERO_TRACE;
}
