/**
 * The tracer every nodelet process records pod journeys with (docs/tracing.md): finished spans
 * always go to a local {@link SpanStore} (served by the debug endpoints) and, when an endpoint is
 * configured, to an OTLP/HTTP collector in batches (OpenTelemetry's batch processor and exporter).
 *
 * Spans of one pod are recorded by several processes (API server, scheduler, agent), so parents
 * are passed explicitly as {@link TraceParent}s (the pod's annotation, or a span handle's
 * `context`), never through an ambient context. Times are explicit epoch milliseconds from
 * {@link JourneyTracer.now} (Date.now by default): every process on the machine reads the same wall
 * clock, so one pod's spans from different processes line up.
 *
 * Every span is recorded (there is no sampling: the store keeps them all), so a span is a plain
 * record from the start: no OpenTelemetry span, context or sampler is built per span (they cost
 * the API server a few per cent of its CPU per pod create). An OpenTelemetry span (a
 * `ReadableSpan` view of the record) is made only when a span ends and an exporter wants it.
 * Recording is synchronous and cheap (the store is in memory; the OTLP batch processor exports
 * from a timer); nothing here writes to the API. `close()` flushes the exporter and is idempotent.
 */
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { SpanKind, SpanStatusCode, TraceFlags, type HrTime, type SpanContext } from '@opentelemetry/api';
import { BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { OTLPTraceExporter as OtlpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { AgentError, describeError, noopLogger, type Logger } from '@nodelet/base';
import { SpanStore, type SpanStoreOptions } from './span-store.js';
import type { SpanRecord } from './span-record.js';
import type { TraceParent } from './traceparent.js';

export type SpanAttributes = Record<string, string | number | boolean>;

export interface JourneyTracerOptions {
  /** `service.name` of the spans: `nodelet-server` or `nodelet-agent`. */
  service: string;
  /**
   * OTLP/HTTP collector (`--tracing-endpoint`): `http(s)://host:port` (spans go to `/v1/traces`
   * there), a full URL with a path, or `host:port` (plain HTTP). Unset: local store only.
   */
  endpoint?: string;
  store?: SpanStoreOptions;
  /** Epoch ms; injected so tests control time. */
  now?: () => number;
  logger?: Logger;
}

/** A span that is still open: children name {@link context} as their parent. */
export interface SpanHandle {
  /** This span as a parent (trace id + this span's id). */
  readonly context: TraceParent;
  setName(name: string): void;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Ends the span at `endMs` (default now); `error` marks the step failed. Later calls do nothing. */
  end(endMs?: number, error?: unknown): void;
}

/** The tracer of one component (instrumentation scope): apiserver, scheduler, agent. */
export interface ScopedTracer {
  /** Opens a span under `parent` (a pod's trace context or an open span's). */
  start(name: string, parent: TraceParent, attributes?: SpanAttributes, startMs?: number): SpanHandle;
  /** Records a finished step under `parent` and returns its context. */
  record(name: string, parent: TraceParent, startMs: number, endMs: number, attributes?: SpanAttributes, error?: unknown): TraceParent;
  /**
   * Opens the root of a new trace, or, with `parent` (a client's valid traceparent), a span of the
   * client's trace under the client's span.
   */
  startRoot(name: string, parent: TraceParent | undefined, attributes?: SpanAttributes, startMs?: number): SpanHandle;
}

/** The OTLP/HTTP traces URL for an endpoint flag value; throws ERR_INVALID_ARGUMENT when malformed. */
export function otlpTracesUrl(endpoint: string): string {
  const raw = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `tracing endpoint "${endpoint}" is not a URL or host:port`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AgentError('ERR_INVALID_ARGUMENT', `tracing endpoint "${endpoint}": OTLP/HTTP needs http or https`);
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1/traces';
  return url.toString();
}

/**
 * The OpenTelemetry SDK variables that would shape the export but that this tracer does not read
 * (it makes no SDK span, sampler or limits; docs/tracing.md). Set with an endpoint they would be
 * silently ignored, so a process given an endpoint refuses them at start. The samplers equal to
 * what the tracer does (every span exported) are accepted.
 */
const UNREAD_OTEL_VARIABLES = [
  'OTEL_TRACES_SAMPLER_ARG', 'OTEL_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_SPAN_LINK_COUNT_LIMIT', 'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT', 'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
];
const EXPORT_ALL_SAMPLERS = new Set(['always_on', 'parentbased_always_on']);

/**
 * Throws ERR_INVALID_ARGUMENT naming the OpenTelemetry variables set in `env` that the export
 * would ignore (a sampler other than always-on, span limits); called where `--tracing-endpoint`
 * is checked.
 */
export function refuseUnreadOtelVariables(env: NodeJS.ProcessEnv = process.env): void {
  const set = UNREAD_OTEL_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '');
  const sampler = env.OTEL_TRACES_SAMPLER;
  if (sampler && !EXPORT_ALL_SAMPLERS.has(sampler.trim().toLowerCase())) set.unshift('OTEL_TRACES_SAMPLER');
  if (set.length) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} not supported: nodelet exports every span, with at most ${ATTRIBUTE_COUNT_LIMIT} attributes each, and reads no OpenTelemetry sampler or span limit (unset ${set.length === 1 ? 'it' : 'them'}; docs/tracing.md)`);
  }
}

/**
 * The OTLP/HTTP exporter, loaded only when an endpoint is configured: with its protobuf and
 * metrics serialisers it is ~0.4 MiB of modules (a third of the tracing code) that a process
 * keeping its spans in memory never runs. Synchronous, so the tracer's constructor stays so.
 */
function otlpExporter(url: string): OtlpTraceExporter {
  const { OTLPTraceExporter } = createRequire(import.meta.url)('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url });
}

/** OpenTelemetry's default limit of attributes per span (later new keys are dropped). */
const ATTRIBUTE_COUNT_LIMIT = 128;

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Random ids from a pool of random bytes (one `randomFillSync` per 256 span ids), never all zeros. */
class Ids {
  readonly #pool = Buffer.alloc(4096);
  #at = this.#pool.length;

  /** `bytes` random bytes as lower-case hex (a table, not Buffer#toString: this runs per span). */
  hex(bytes: number): string {
    for (;;) {
      if (this.#at + bytes > this.#pool.length) {
        randomFillSync(this.#pool);
        this.#at = 0;
      }
      let id = '';
      let zero = true;
      for (const end = this.#at + bytes; this.#at < end; this.#at++) {
        const b = this.#pool[this.#at]!;
        if (b !== 0) zero = false;
        id += HEX[b]!;
      }
      if (!zero) return id;
    }
  }
}

/** Epoch ms as OpenTelemetry's [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  let s = Math.floor(ms / 1000);
  let ns = Math.round((ms - s * 1000) * 1e6);
  if (ns >= 1e9) {
    s += 1;
    ns -= 1e9;
  }
  return [s, ns];
}

/** A finished span as OpenTelemetry's exporters read it. */
function readableSpan(rec: SpanRecord, resource: Resource, scope: string): ReadableSpan {
  const ctx: SpanContext = { traceId: rec.traceId, spanId: rec.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: rec.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => ctx,
    ...(rec.parentSpanId ? { parentSpanContext: { traceId: rec.traceId, spanId: rec.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true } } : {}),
    startTime: hrTime(rec.startMs),
    endTime: hrTime(rec.endMs),
    duration: hrTime(rec.endMs - rec.startMs),
    status: rec.error === undefined ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: rec.error },
    attributes: rec.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: scope },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** Where a scope's finished spans go (the tracer's store and exporter). */
type Finish = (rec: SpanRecord) => void;

/** An open span: a plain record being filled in (a class, not closures: one is made per span). */
class RecordingSpan implements SpanHandle {
  readonly context: TraceParent;
  readonly #attrs: SpanAttributes = {};
  #count = 0;
  #ended = false;

  constructor(
    private name: string,
    private readonly parentSpanId: string | undefined,
    private readonly startMs: number,
    private readonly scope: string,
    private readonly service: string,
    private readonly now: () => number,
    private readonly finish: Finish,
    traceId: string,
    spanId: string,
    attributes: SpanAttributes | undefined,
  ) {
    this.context = { traceId, spanId, flags: TraceFlags.SAMPLED };
    if (attributes) for (const k of Object.keys(attributes)) this.setAttribute(k, attributes[k]!);
  }

  setName(name: string): void {
    if (!this.#ended) this.name = name;
  }

  setAttribute(key: string, value: string | number | boolean): void {
    const v: unknown = value;
    if (this.#ended || key === '' || (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')) return;
    if (!(key in this.#attrs)) {
      if (this.#count >= ATTRIBUTE_COUNT_LIMIT) return;
      this.#count++;
    }
    this.#attrs[key] = value;
  }

  end(endMs?: number, error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const { traceId, spanId } = this.context;
    // A span that would end before it started lasts 0 ms (as OpenTelemetry's spans).
    const rec: SpanRecord = { traceId, spanId, name: this.name, startMs: this.startMs, endMs: Math.max(this.startMs, endMs ?? this.now()), service: this.service, scope: this.scope, attributes: this.#attrs };
    if (this.parentSpanId) rec.parentSpanId = this.parentSpanId;
    if (error !== undefined) rec.error = describeError(error);
    this.finish(rec);
  }
}

/** The spans of one instrumentation scope. */
class Scope implements ScopedTracer {
  constructor(
    private readonly name: string,
    private readonly service: string,
    private readonly ids: Ids,
    private readonly now: () => number,
    private readonly finish: Finish,
  ) {}

  start(name: string, parent: TraceParent, attributes?: SpanAttributes, startMs?: number): SpanHandle {
    return this.#open(name, parent.traceId, parent.spanId, attributes, startMs);
  }

  record(name: string, parent: TraceParent, startMs: number, endMs: number, attributes?: SpanAttributes, error?: unknown): TraceParent {
    const h = this.start(name, parent, attributes, startMs);
    h.end(Math.max(startMs, endMs), error);
    return h.context;
  }

  startRoot(name: string, parent: TraceParent | undefined, attributes?: SpanAttributes, startMs?: number): SpanHandle {
    return this.#open(name, parent?.traceId ?? this.ids.hex(16), parent?.spanId, attributes, startMs);
  }

  #open(name: string, traceId: string, parentSpanId: string | undefined, attributes: SpanAttributes | undefined, startMs: number | undefined): SpanHandle {
    return new RecordingSpan(name, parentSpanId, startMs ?? this.now(), this.name, this.service, this.now, this.finish, traceId, this.ids.hex(8), attributes);
  }
}

export class JourneyTracer {
  readonly store: SpanStore;
  readonly now: () => number;
  readonly #service: string;
  readonly #ids = new Ids();
  /** The OTLP batch processor, when an endpoint is configured, and the resource its spans carry. */
  readonly #export?: { processor: BatchSpanProcessor; resource: Resource };
  readonly #log: Logger;
  #closed?: Promise<void>;

  constructor(o: JourneyTracerOptions) {
    this.store = new SpanStore(o.store);
    this.now = o.now ?? Date.now;
    this.#service = o.service;
    this.#log = o.logger ?? noopLogger;
    if (o.endpoint) this.#export = { processor: new BatchSpanProcessor(otlpExporter(otlpTracesUrl(o.endpoint))), resource: resourceFromAttributes({ 'service.name': o.service }) };
  }

  /** The spans this process kept for `traceId`. */
  spans(traceId: string): SpanRecord[] {
    return this.store.get(traceId);
  }

  scope(scope: string): ScopedTracer {
    const exporter = this.#export;
    const finish: Finish = exporter
      ? (rec) => {
          this.store.add(rec);
          exporter.processor.onEnd(readableSpan(rec, exporter.resource, scope));
        }
      : (rec) => this.store.add(rec);
    return new Scope(scope, this.#service, this.#ids, this.now, finish);
  }

  /** Exports what is still batched and stops. Idempotent; never rejects. */
  close(): Promise<void> {
    this.#closed ??= (this.#export?.processor.shutdown() ?? Promise.resolve()).catch((err: unknown) => this.#log.warn({ err: describeError(err) }, 'Trace exporter shutdown failed'));
    return this.#closed;
  }
}
