/**
 * The tracer every nodelet process records pod journeys with (docs/tracing.md): an OpenTelemetry
 * tracer provider whose finished spans always go to a local {@link SpanStore} (served by the debug
 * endpoints) and, when an endpoint is configured, to an OTLP/HTTP collector in batches.
 *
 * Spans of one pod are recorded by several processes (API server, scheduler, agent), so parents
 * are passed explicitly as {@link TraceParent}s (the pod's annotation, or a span handle's
 * `context`), never through an ambient context. Times are explicit epoch milliseconds from
 * {@link JourneyTracer.now} (Date.now by default): every process on the machine reads the same wall
 * clock, so one pod's spans from different processes line up.
 *
 * Recording is synchronous and cheap (the store is in memory; the OTLP batch processor exports
 * from a timer); nothing here writes to the API. `close()` flushes the exporter and is idempotent.
 */
import { trace, context as otelContext, TraceFlags, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { OTLPTraceExporter as OtlpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { createRequire } from 'node:module';
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
 * The OTLP/HTTP exporter, loaded only when an endpoint is configured: with its protobuf and
 * metrics serialisers it is ~0.4 MiB of modules (a third of the tracing code) that a process
 * keeping its spans in memory never runs. Synchronous, so the tracer's constructor stays so.
 */
function otlpExporter(url: string): OtlpTraceExporter {
  const { OTLPTraceExporter } = createRequire(import.meta.url)('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url });
}

const toMs = (t: [number, number]): number => t[0] * 1000 + t[1] / 1e6;

/** Copies each finished span into the store, as a plain record. */
class StoreProcessor implements SpanProcessor {
  constructor(
    readonly store: SpanStore,
    readonly service: string,
  ) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    const sc = span.spanContext();
    const attributes: SpanAttributes = {};
    for (const [k, v] of Object.entries(span.attributes)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
    const rec: SpanRecord = {
      traceId: sc.traceId,
      spanId: sc.spanId,
      name: span.name,
      startMs: toMs(span.startTime),
      endMs: toMs(span.endTime),
      service: this.service,
      scope: span.instrumentationScope.name,
      attributes,
    };
    if (span.parentSpanContext?.spanId) rec.parentSpanId = span.parentSpanContext.spanId;
    if (span.status.code === SpanStatusCode.ERROR) rec.error = span.status.message ?? 'error';
    this.store.add(rec);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export class JourneyTracer {
  readonly store: SpanStore;
  readonly now: () => number;
  readonly #provider: BasicTracerProvider;
  readonly #log: Logger;
  #closed?: Promise<void>;

  constructor(o: JourneyTracerOptions) {
    this.store = new SpanStore(o.store);
    this.now = o.now ?? Date.now;
    this.#log = o.logger ?? noopLogger;
    const processors: SpanProcessor[] = [new StoreProcessor(this.store, o.service)];
    if (o.endpoint) processors.push(new BatchSpanProcessor(otlpExporter(otlpTracesUrl(o.endpoint))));
    this.#provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': o.service }), spanProcessors: processors });
  }

  /** The spans this process kept for `traceId`. */
  spans(traceId: string): SpanRecord[] {
    return this.store.get(traceId);
  }

  scope(name: string): ScopedTracer {
    const t = this.#provider.getTracer(name);
    const now = this.now;
    const parentCtx = (p: TraceParent) => trace.setSpanContext(otelContext.active(), { traceId: p.traceId, spanId: p.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const handle = (span: Span): SpanHandle => {
      const sc = span.spanContext();
      let ended = false;
      return {
        context: { traceId: sc.traceId, spanId: sc.spanId, flags: TraceFlags.SAMPLED },
        setName: (n) => void span.updateName(n),
        setAttribute: (k, v) => void span.setAttribute(k, v),
        end: (endMs, error) => {
          if (ended) return;
          ended = true;
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: describeError(error) });
          span.end(endMs ?? now());
        },
      };
    };
    const start = (name: string, parent: TraceParent, attributes?: SpanAttributes, startMs?: number): SpanHandle =>
      handle(t.startSpan(name, { startTime: startMs ?? now(), attributes: attributes as Attributes }, parentCtx(parent)));
    return {
      start,
      record(name, parent, startMs, endMs, attributes, error) {
        const h = start(name, parent, attributes, startMs);
        h.end(Math.max(startMs, endMs), error);
        return h.context;
      },
      startRoot(name, parent, attributes, startMs) {
        const ctx = parent ? parentCtx(parent) : trace.deleteSpan(otelContext.active());
        return handle(t.startSpan(name, { root: !parent, startTime: startMs ?? now(), attributes: attributes as Attributes }, ctx));
      },
    };
  }

  /** Exports what is still batched and stops. Idempotent; never rejects. */
  close(): Promise<void> {
    this.#closed ??= this.#provider.shutdown().catch((err: unknown) => this.#log.warn({ err: describeError(err) }, 'Trace exporter shutdown failed'));
    return this.#closed;
  }
}
