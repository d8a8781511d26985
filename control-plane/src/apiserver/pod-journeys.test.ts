// Pod journey tracing through the real API machinery: plain HTTP on port 0, SQLite in a temp dir.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JourneyTracer, parseTraceparent, TRACEPARENT_ANNOTATION, type TraceSpansResponse } from '@nodelet/api/tracing';
import { startTestApiServer, TEST_ADMIN_TOKEN as ADMIN, type TestApiServer, type TestReply } from './testing/test-server.js';

const USER = 'user-token';
const CLIENT_TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('pod journey tracing in the API server', () => {
  let srv: TestApiServer;
  let tracer: JourneyTracer;
  const call = (method: string, path: string, body?: unknown, token = ADMIN, contentType?: string): Promise<TestReply> => srv.call(method, path, body, { token, contentType });
  const pod = (name: string, annotations?: Record<string, string>) => ({ metadata: { name, ...(annotations ? { annotations } : {}) }, spec: { containers: [{ name: 'c', image: 'busybox:latest' }] } });
  const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };

  before(async () => {
    tracer = new JourneyTracer({ service: 'nodelet-server' });
    srv = await startTestApiServer({ tokens: new Map([[USER, { name: 'alice', groups: ['system:authenticated'] }]]), tracer });
  });
  after(async () => {
    await srv?.close();
    await tracer?.close();
  });

  it('a new pod gets a traceparent; api.create and the root span from create to the Ready status write are served', async () => {
    const created = await call('POST', '/api/v1/namespaces/default/pods', pod('traced'));
    assert.equal(created.status, 201);
    const tp = parseTraceparent(created.json.metadata.annotations[TRACEPARENT_ANNOTATION]);
    assert.ok(tp, 'the server wrote a valid traceparent');
    let spans = (await call('GET', `/debug/nodelet/traces/${tp.traceId}`)).json as TraceSpansResponse;
    assert.deepEqual(spans.spans.map((s) => s.name), ['api.create'], 'the root stays open until Ready');
    assert.equal(spans.spans[0]!.parentSpanId, tp.spanId);
    assert.equal(spans.spans[0]!.attributes['k8s.pod.name'], 'traced');

    // A status without Ready does not end the journey; the first with Ready does, once.
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/traced/status', { status: { phase: 'Pending' } }, ADMIN, 'application/merge-patch+json')).status, 200);
    assert.equal((await call('GET', `/debug/nodelet/traces/${tp.traceId}`)).json.spans.length, 1);
    assert.equal((await call('PATCH', '/api/v1/namespaces/default/pods/traced/status', ready, ADMIN, 'application/merge-patch+json')).status, 200);
    spans = (await call('GET', `/debug/nodelet/traces/${tp.traceId}`)).json as TraceSpansResponse;
    const root = spans.spans.find((s) => s.name === 'pod journey')!;
    assert.equal(root.spanId, tp.spanId);
    assert.equal(root.parentSpanId, undefined);
    const create = spans.spans.find((s) => s.name === 'api.create')!;
    assert.equal(create.startMs, root.startMs, 'the journey starts when the create request arrived');
    assert.ok(root.endMs >= create.endMs);
    assert.equal(srv.server.context.journeys!.openCount, 0);
  });

  it("a client's valid traceparent keeps its trace; an invalid one is replaced", async () => {
    const kept = await call('POST', '/api/v1/namespaces/default/pods', pod('client-traced', { [TRACEPARENT_ANNOTATION]: CLIENT_TP }));
    const tp = parseTraceparent(kept.json.metadata.annotations[TRACEPARENT_ANNOTATION])!;
    assert.equal(tp.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.notEqual(tp.spanId, '00f067aa0ba902b7', 'the annotation names the journey span, a child of the client span');
    await call('PATCH', '/api/v1/namespaces/default/pods/client-traced/status', ready, ADMIN, 'application/merge-patch+json');
    const root = (await call('GET', `/debug/nodelet/traces/${tp.traceId}`)).json.spans.find((s: { name: string }) => s.name === 'pod journey');
    assert.equal(root.parentSpanId, '00f067aa0ba902b7');

    const replaced = await call('POST', '/api/v1/namespaces/default/pods', pod('bad-traced', { [TRACEPARENT_ANNOTATION]: '00-ZZZ-not-a-trace' }));
    assert.equal(replaced.status, 201);
    assert.ok(parseTraceparent(replaced.json.metadata.annotations[TRACEPARENT_ANNOTATION]));
  });

  it('a dry run gets no trace context; the endpoint needs RBAC and a trace id', async () => {
    const dry = await call('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('dry'));
    assert.equal(dry.status, 201);
    assert.equal(dry.json.metadata.annotations?.[TRACEPARENT_ANNOTATION], undefined);
    assert.equal((await call('GET', `/debug/nodelet/traces/${'a'.repeat(32)}`, undefined, USER)).status, 403);
    assert.equal((await call('GET', '/debug/nodelet/traces/not-a-trace-id')).status, 400);
    assert.deepEqual((await call('GET', `/debug/nodelet/traces/${'b'.repeat(32)}`)).json.spans, []);
  });

  it('nodes/<name>/proxy/<path> is routed as the nodes/proxy subresource, authorized by RBAC, every proxied method', async () => {
    const denied = await call('GET', '/api/v1/nodes/n1/proxy/debug/nodelet/traces/x', undefined, USER);
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /nodes\/proxy/);
    const missing = await call('GET', '/api/v1/nodes/n1/proxy/debug/nodelet/traces/x');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.details?.kind, 'nodes');
    assert.equal((await call('POST', '/api/v1/nodes/n1/proxy/x', {})).status, 404);
    assert.equal((await call('PROPFIND', '/api/v1/nodes/n1/proxy/x')).status, 405);
  });
});
