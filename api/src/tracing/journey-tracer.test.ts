import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JourneyTracer, otlpTracesUrl, refuseUnreadOtelVariables } from './journey-tracer.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

// Epoch ms: OpenTelemetry reads a number below the process's time origin as performance.now().
const B = 1_800_000_000_000;

test('spans nest under explicit parents and land in the store with their times', async (t) => {
  const tracer = new JourneyTracer({ service: 'nodelet-test' });
  t.after(() => tracer.close());
  const api = tracer.scope('apiserver');
  const root = api.startRoot('pod journey', undefined, { 'k8s.pod.name': 'p' }, B + 1000);
  const child = api.record('api.create', root.context, B + 1000, B + 1012.5, { 'k8s.pod.name': 'p' });
  api.record('agent.sandbox', child, B + 1013, B + 1020, {}, new Error('boom'));
  root.end(B + 1100);
  root.end(B + 1200); // ignored
  const spans = tracer.spans(root.context.traceId);
  assert.equal(spans.length, 3);
  const byName = new Map(spans.map((s) => [s.name, s]));
  const r = byName.get('pod journey')!;
  assert.equal(r.parentSpanId, undefined);
  assert.equal(r.startMs, B + 1000);
  assert.equal(r.endMs, B + 1100);
  assert.equal(r.service, 'nodelet-test');
  assert.equal(byName.get('api.create')!.parentSpanId, r.spanId);
  assert.equal(byName.get('api.create')!.endMs, B + 1012.5);
  assert.equal(byName.get('agent.sandbox')!.parentSpanId, child.spanId);
  assert.equal(byName.get('agent.sandbox')!.error, 'boom');
  assert.equal(byName.get('api.create')!.scope, 'apiserver');
});

test('a root under a client traceparent keeps the client trace id and parents to its span', async (t) => {
  const tracer = new JourneyTracer({ service: 'nodelet-test' });
  t.after(() => tracer.close());
  const client = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')!;
  const root = tracer.scope('apiserver').startRoot('pod journey', client, {}, B + 5);
  root.end(B + 6);
  assert.equal(root.context.traceId, client.traceId);
  assert.notEqual(root.context.spanId, client.spanId);
  assert.equal(tracer.spans(client.traceId)[0]!.parentSpanId, client.spanId);
  assert.match(formatTraceparent(root.context), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
});

test('with an endpoint, spans are exported over OTLP/HTTP', async (t) => {
  const bodies: Array<{ path: string; body: string }> = [];
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => srv.close(() => r())));
  const tracer = new JourneyTracer({ service: 'nodelet-test', endpoint: `127.0.0.1:${(srv.address() as AddressInfo).port}` });
  tracer.scope('apiserver').startRoot('pod journey', undefined, {}, B + 1).end(B + 2);
  await tracer.close();
  assert.equal(bodies.length, 1);
  assert.equal(bodies[0]!.path, '/v1/traces');
  assert.match(bodies[0]!.body, /pod journey/);
  assert.match(bodies[0]!.body, /nodelet-test/);
});

// Pins what the exporter receives now that spans are plain records until they end (the same
// fields the OpenTelemetry SDK's own spans exported): ids, parent, times, status, scope, resource.
test('an exported span carries its ids, parent, times, error status, attributes and scope', async (t) => {
  const bodies: string[] = [];
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => srv.close(() => r())));
  const tracer = new JourneyTracer({ service: 'nodelet-test', endpoint: `127.0.0.1:${(srv.address() as AddressInfo).port}` });
  const api = tracer.scope('apiserver');
  const root = api.startRoot('pod journey', undefined, {}, B + 1);
  const child = api.record('api.create', root.context, B + 1, B + 3.5, { 'k8s.pod.name': 'p' }, new Error('boom'));
  await tracer.close();
  interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string; endTimeUnixNano: string; status: { code?: number; message?: string }; attributes: Array<{ key: string; value: { stringValue?: string } }> }
  const body = JSON.parse(bodies.join('')) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }> }> };
  const rs = body.resourceSpans[0]!;
  assert.deepEqual(rs.resource.attributes, [{ key: 'service.name', value: { stringValue: 'nodelet-test' } }]);
  assert.equal(rs.scopeSpans[0]!.scope.name, 'apiserver');
  const spans = rs.scopeSpans[0]!.spans;
  assert.equal(spans.length, 1, 'the open root is not exported');
  const s = spans[0]!;
  assert.deepEqual([s.traceId, s.spanId, s.parentSpanId, s.name], [root.context.traceId, child.spanId, root.context.spanId, 'api.create']);
  assert.equal(s.startTimeUnixNano, String(BigInt(B + 1) * 1_000_000n));
  assert.equal(s.endTimeUnixNano, String(BigInt(B + 3) * 1_000_000n + 500_000n));
  assert.deepEqual(s.status, { code: 2, message: 'boom' });
  assert.deepEqual(s.attributes, [{ key: 'k8s.pod.name', value: { stringValue: 'p' } }]);
});

test('a span ending before its start lasts 0 ms; an ended span takes no more attributes or names', (t) => {
  const tracer = new JourneyTracer({ service: 'nodelet-test' });
  t.after(() => tracer.close());
  const root = tracer.scope('agent').startRoot('pod journey', undefined, { a: 1 }, B + 10);
  root.end(B + 5);
  root.setAttribute('b', 2);
  root.setName('renamed');
  const [s] = tracer.spans(root.context.traceId);
  assert.deepEqual([s!.name, s!.startMs, s!.endMs, s!.attributes], ['pod journey', B + 10, B + 10, { a: 1 }]);
  assert.match(root.context.traceId, /^[0-9a-f]{32}$/);
  assert.match(root.context.spanId, /^[0-9a-f]{16}$/);
});

test('otlpTracesUrl: host:port, a base URL and a full URL; refuses other schemes', () => {
  assert.equal(otlpTracesUrl('collector:4318'), 'http://collector:4318/v1/traces');
  assert.equal(otlpTracesUrl('https://c.example:4318'), 'https://c.example:4318/v1/traces');
  assert.equal(otlpTracesUrl('http://c:4318/custom/traces'), 'http://c:4318/custom/traces');
  assert.throws(() => otlpTracesUrl('grpc://c:4317'), /OTLP\/HTTP/);
});

test('OpenTelemetry variables the export would ignore are refused by name; the always-on samplers pass', () => {
  assert.doesNotThrow(() => refuseUnreadOtelVariables({}));
  assert.doesNotThrow(() => refuseUnreadOtelVariables({ OTEL_TRACES_SAMPLER: 'parentbased_always_on', OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_SPAN_LINK_COUNT_LIMIT: '' }));
  assert.throws(() => refuseUnreadOtelVariables({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), (err: Error) => {
    assert.match(err.message, /^OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG are not supported: nodelet exports every span/);
    return true;
  });
  assert.throws(() => refuseUnreadOtelVariables({ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '16' }), /OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT is not supported/);
});
