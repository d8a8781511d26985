// Admission webhooks end to end: a real API server calls a real HTTPS webhook (test CA) in this process.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { parseAuditPolicy } from '../../audit/policy.js';
import { startTestApiServer, type TestApiServer } from '../../testing/test-server.js';
import { startTestWebhookServer, type ReviewRequest, type TestWebhookServer, type WebhookAnswer } from '../../testing/webhook-server.js';

const ADM = '/apis/admissionregistration.k8s.io/v1';
const CM = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
const patchOf = (ops: unknown[]): string => Buffer.from(JSON.stringify(ops)).toString('base64');

describe('admission webhooks', () => {
  let srv: TestApiServer;
  let wh: TestWebhookServer;
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-webhook-test-'));
  const auditLog = join(dir, 'audit.log');
  before(async () => {
    const policy = parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
    srv = await startTestApiServer({ audit: { policy, path: auditLog, rotation: { maxSizeMB: 0, maxAgeDays: 0, maxBackups: 0 } } });
    wh = await startTestWebhookServer(['hooks.default.svc']);
  });
  after(async () => {
    await srv?.close();
    await wh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The audit annotations of the request whose reply carried `Audit-ID: id`. */
  const auditAnnotationsOf = (id: string | null): Promise<Record<string, string>> =>
    pollUntil(`the audit event of ${id}`, () => {
      const events = readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { auditID: string; stage: string; annotations?: Record<string, string> });
      const done = events.find((e) => e.auditID === id && e.stage === 'ResponseComplete');
      return done && (done.annotations ?? {});
    }, { timeoutMs: 5000, intervalMs: 20 });

  /** A webhook on configmap writes labelled `case: <c>` (each test its own, so they do not meet). */
  const webhook = (c: string, path: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: `${c}.hooks.example.com`,
    clientConfig: { url: `https://127.0.0.1:${wh.port}${path}`, caBundle: wh.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    objectSelector: { matchLabels: { case: c } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...over,
  });

  /**
   * Installs a configuration and waits until its webhooks see requests: a dry-run probe
   * (`probe-…`, answered `allowed` by every handler) until the webhook has received one.
   */
  const install = async (kind: 'mutating' | 'validating', c: string, hooks: Array<Record<string, unknown>>, ns = 'default'): Promise<void> => {
    const r = await srv.call('POST', `${ADM}/${kind}webhookconfigurations`, { metadata: { name: c }, webhooks: hooks });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    let n = 0;
    await pollUntil(`webhook ${c} active`, async () => {
      const name = `probe-${c}-${n++}`;
      await srv.call('POST', `${CM(ns)}?dryRun=All`, { metadata: { name, labels: { case: c } } });
      return wh.received.some((x) => x.request.name === name);
    }, { timeoutMs: 10_000, intervalMs: 50 });
  };
  /** A handler that lets probes through and answers the rest with `fn`. */
  const handle = (path: string, fn: (req: ReviewRequest) => WebhookAnswer): void =>
    wh.handle(path, (req) => (String(req.name ?? '').startsWith('probe-') ? { allowed: true } : fn(req)));
  const reviewsOf = (name: string): ReviewRequest[] => wh.received.filter((x) => x.request.name === name).map((x) => x.request);
  const cm = (c: string, name: string, data: Record<string, string> = {}): Record<string, unknown> => ({ metadata: { name, labels: { case: c } }, data });

  it('sends an AdmissionReview v1 and lets an allowed write through, with the webhook’s warnings', async () => {
    handle('/allow', () => ({ allowed: true, warnings: ['careful now'], auditAnnotations: { verdict: 'fine' } }));
    await install('validating', 'allow', [webhook('allow', '/allow')]);
    const r = await srv.call('POST', CM('default'), cm('allow', 'ok', { a: '1' }));
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.match(r.headers.get('warning') ?? '', /299 - "careful now"/);
    assert.equal((await auditAnnotationsOf(r.headers.get('audit-id')))['allow.hooks.example.com/verdict'], 'fine');
    const [req] = reviewsOf('ok');
    assert.ok(req);
    assert.equal(req.operation, 'CREATE');
    assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(req.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.equal(req.namespace, 'default');
    assert.equal(req.userInfo.username, 'admin');
    assert.equal(req.object.kind, 'ConfigMap');
    assert.deepEqual(req.object.data, { a: '1' });
    assert.equal(req.oldObject, null);
    assert.equal(req.dryRun, false);
    assert.equal(req.options.kind, 'CreateOptions');
    const del = await srv.call('DELETE', `${CM('default')}/ok`);
    assert.equal(del.status, 200);
    const d = reviewsOf('ok').find((x) => x.operation === 'DELETE');
    assert.equal(d?.oldObject.data.a, '1');
  });

  it('returns a denial as the API error: 400 by default, the webhook’s code and reason when it sets them', async () => {
    handle('/deny', (req) => ({ allowed: false, status: req.name === 'coded' ? { code: 403, reason: 'Forbidden', message: 'not this one' } : { message: 'no thanks' } }));
    await install('validating', 'deny', [webhook('deny', '/deny')]);
    const plain = await srv.call('POST', CM('default'), cm('deny', 'plain'));
    assert.equal(plain.status, 400);
    assert.equal(plain.json.message, 'admission webhook "deny.hooks.example.com" denied the request: no thanks');
    const coded = await srv.call('POST', CM('default'), cm('deny', 'coded'));
    assert.equal(coded.status, 403);
    assert.equal(coded.json.reason, 'Forbidden');
    assert.equal(coded.json.message, 'admission webhook "deny.hooks.example.com" denied the request: not this one');
    assert.equal((await srv.call('GET', `${CM('default')}/plain`)).status, 404);
  });

  it('applies a mutating webhook’s JSONPatch to the stored object, and validates the result', async () => {
    handle('/mutate', (req) =>
      req.name === 'broken'
        ? { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/metadata/labels/bad key!', value: 'x' }]) }
        : { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/injected', value: 'yes' }, { op: 'add', path: '/metadata/labels/mutated', value: 'true' }, { op: 'replace', path: '/metadata/uid', value: 'chosen-by-webhook' }]) });
    await install('mutating', 'mutate', [webhook('mutate', '/mutate')]);
    const r = await srv.call('POST', CM('default'), cm('mutate', 'changed', { own: 'v' }));
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const stored = (await srv.call('GET', `${CM('default')}/changed`)).json;
    assert.deepEqual(stored.data, { own: 'v', injected: 'yes' });
    assert.equal(stored.metadata.labels.mutated, 'true');
    const notes = await auditAnnotationsOf(r.headers.get('audit-id'));
    const mutation = Object.entries(notes).find(([k]) => k.startsWith('mutation.webhook.admission.k8s.io/round_0_index_'));
    assert.deepEqual(JSON.parse(mutation?.[1] ?? '{}'), { configuration: 'mutate', webhook: 'mutate.hooks.example.com', mutated: true });
    assert.notEqual(stored.metadata.uid, 'chosen-by-webhook', 'server-owned metadata stays the server’s');
    assert.equal(stored.metadata.uid, r.json.metadata.uid);
    const bad = await srv.call('POST', CM('default'), cm('mutate', 'broken'));
    assert.equal(bad.status, 422, JSON.stringify(bad.json));
    assert.match(bad.json.details.causes[0].field, /metadata\.labels/);
  });

  it('reinvokes an IfNeeded webhook once another changed the object after it', async () => {
    handle('/first', (req) => ({ allowed: true, ...(req.object.data?.second ? { patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/first-saw-second', value: 'yes' }]) } : {}) }));
    handle('/second', () => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/data/second', value: 'yes' }]) }));
    await install('mutating', 'reinvoke', [webhook('reinvoke', '/first', { reinvocationPolicy: 'IfNeeded' }), webhook('reinvoke2', '/second', { objectSelector: { matchLabels: { case: 'reinvoke' } } })]);
    const r = await srv.call('POST', CM('default'), { ...cm('reinvoke', 'again'), data: {} });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.json.data, { second: 'yes', 'first-saw-second': 'yes' });
    assert.equal(reviewsOf('again').length, 3);
  });

  it('times out a slow webhook: Fail refuses the request with upstream’s message, Ignore lets it through', async () => {
    handle('/hang', () => 'hang');
    await install('validating', 'slow', [webhook('slow', '/hang', { timeoutSeconds: 1 })]);
    const started = Date.now();
    const failed = await srv.call('POST', CM('default'), cm('slow', 'timed-out'));
    assert.equal(failed.status, 500);
    assert.equal(failed.json.reason, 'InternalError');
    assert.equal(failed.json.message, `Internal error occurred: failed calling webhook "slow.hooks.example.com": failed to call webhook: Post "https://127.0.0.1:${wh.port}/hang?timeout=1s": context deadline exceeded`);
    assert.ok(Date.now() - started < 5000);
    await install('validating', 'lenient', [webhook('lenient', '/hang', { timeoutSeconds: 1, failurePolicy: 'Ignore' })]);
    const ignored = await srv.call('POST', CM('default'), cm('lenient', 'let-through'));
    assert.equal(ignored.status, 201, JSON.stringify(ignored.json));
    const notes = await auditAnnotationsOf(ignored.headers.get('audit-id'));
    assert.ok(Object.entries(notes).some(([k, v]) => k.startsWith('failed-open.validating.webhook.admission.k8s.io/round_0_index_') && v === 'lenient.hooks.example.com'), JSON.stringify(notes));
  });

  it('calls a webhook only for the namespaces and objects its selectors pick', async () => {
    handle('/picky', () => ({ allowed: false, status: { message: 'picked' } }));
    for (const [name, labels] of [['hooked', { webhooks: 'on' }], ['plain', {}]] as const) {
      assert.equal((await srv.call('POST', '/api/v1/namespaces', { metadata: { name, labels } })).status, 201);
    }
    await install('validating', 'picky', [webhook('picky', '/picky', { namespaceSelector: { matchLabels: { webhooks: 'on' } }, objectSelector: { matchExpressions: [{ key: 'case', operator: 'In', values: ['picky'] }, { key: 'skip', operator: 'DoesNotExist' }] } })], 'hooked');
    assert.equal((await srv.call('POST', CM('hooked'), cm('picky', 'a'))).status, 400);
    assert.equal((await srv.call('POST', CM('plain'), cm('picky', 'b'))).status, 201);
    const skipped = await srv.call('POST', CM('hooked'), { metadata: { name: 'c', labels: { case: 'picky', skip: 'yes' } } });
    assert.equal(skipped.status, 201);
    assert.deepEqual(reviewsOf('b'), []);
    assert.deepEqual(reviewsOf('c'), []);
  });

  it('tells a webhook about a dry run, and nothing is stored', async () => {
    handle('/dry', () => ({ allowed: true }));
    await install('validating', 'dry', [webhook('dry', '/dry', { sideEffects: 'NoneOnDryRun' })]);
    const r = await srv.call('POST', `${CM('default')}?dryRun=All`, cm('dry', 'not-stored'));
    assert.equal(r.status, 201);
    const [req] = reviewsOf('not-stored');
    assert.equal(req?.dryRun, true);
    assert.deepEqual(req?.options.dryRun, ['All']);
    assert.equal((await srv.call('GET', `${CM('default')}/not-stored`)).status, 404);
  });

  it('reaches a webhook through a Service’s ready endpoint, verifying the certificate for <svc>.<ns>.svc', async () => {
    handle('/svc', (req) => ({ allowed: false, status: { message: `via service: ${req.name}` } }));
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: wh.port }] } })).status, 201);
    const slice = {
      metadata: { name: 'hooks-1', labels: { 'kubernetes.io/service-name': 'hooks' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'https', port: wh.port, protocol: 'TCP' }],
    };
    assert.equal((await srv.call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', slice)).status, 201);
    await install('validating', 'svc', [webhook('svc', '', { clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/svc' }, caBundle: wh.caBundle } })]);
    const r = await srv.call('POST', CM('default'), cm('svc', 'through-service'));
    assert.equal(r.status, 400);
    assert.equal(r.json.message, 'admission webhook "svc.hooks.example.com" denied the request: via service: through-service');
    // Another Service on the same endpoint: the certificate is not valid for other.default.svc.
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'other' }, spec: { ports: [{ name: 'https', port: 443, targetPort: wh.port }] } })).status, 201);
    assert.equal((await srv.call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { ...slice, metadata: { name: 'other-1', labels: { 'kubernetes.io/service-name': 'other' } } })).status, 201);
    const wrong = { clientConfig: { service: { namespace: 'default', name: 'other', path: '/svc' }, caBundle: wh.caBundle }, objectSelector: { matchLabels: { case: 'wrongname' } } };
    const cfg = await srv.call('POST', `${ADM}/validatingwebhookconfigurations`, { metadata: { name: 'wrongname' }, webhooks: [webhook('wrongname', '', wrong)] });
    assert.equal(cfg.status, 201);
    const refused = await pollUntil('the wrongname webhook in force', async () => {
      const x = await srv.call('POST', `${CM('default')}?dryRun=All`, cm('wrongname', 'wrong-cert'));
      return x.status === 500 ? x : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    assert.match(refused.json.message, /^Internal error occurred: failed calling webhook "wrongname\.hooks\.example\.com": failed to call webhook: Post "https:\/\/other\.default\.svc:443\/svc\?timeout=10s": .*other\.default\.svc/);
    assert.deepEqual(reviewsOf('wrong-cert'), []);
  });

  it('matches a subresource rule (pods/status) and not the main resource', async () => {
    handle('/status', (req) => ({ allowed: false, status: { message: `no ${req.subResource} writes` } }));
    const pod = { metadata: { name: 'p', labels: { case: 'status' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox:1.36' }] } };
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    const r = await srv.call('POST', `${ADM}/validatingwebhookconfigurations`, {
      metadata: { name: 'status' },
      webhooks: [webhook('status', '/status', { rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'] }] })],
    });
    assert.equal(r.status, 201);
    const patch = (sub: string, body: unknown): Promise<{ status: number; json: any }> => srv.call('PATCH', `/api/v1/namespaces/default/pods/p${sub}`, body, { contentType: 'application/merge-patch+json' }); // eslint-disable-line @typescript-eslint/no-explicit-any
    const refused = await pollUntil('the pods/status webhook in force', async () => {
      const x = await patch('/status', { status: { message: `try ${Date.now()}` } });
      return x.status === 400 ? x : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(refused.json.message, 'admission webhook "status.hooks.example.com" denied the request: no status writes');
    assert.equal((await patch('', { metadata: { annotations: { a: 'b' } } })).status, 200);
  });

  it('sends a subresource’s own kind (pods/eviction: policy/v1 Eviction)', async () => {
    handle('/evict', () => ({ allowed: false, status: { message: 'stay' } }));
    const pod = { metadata: { name: 'e' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox:1.36' }] } };
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    const r = await srv.call('POST', `${ADM}/validatingwebhookconfigurations`, {
      metadata: { name: 'evict' },
      webhooks: [webhook('evict', '/evict', { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'] }], objectSelector: {} })],
    });
    assert.equal(r.status, 201);
    const refused = await pollUntil('the eviction webhook in force', async () => {
      const x = await srv.call('POST', '/api/v1/namespaces/default/pods/e/eviction', { metadata: { name: 'e', namespace: 'default' } });
      return x.status === 400 ? x : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(refused.json.message, 'admission webhook "evict.hooks.example.com" denied the request: stay');
    const req = wh.received.find((x) => x.path === '/evict')!.request;
    assert.deepEqual(req.kind, { group: 'policy', version: 'v1', kind: 'Eviction' });
    assert.equal(req.subResource, 'eviction');
    assert.equal(req.object.kind, 'Eviction');
    assert.equal(req.object.apiVersion, 'policy/v1');
  });

  it('admits CONNECT (pods/exec) with the PodExecOptions as the object', async () => {
    handle('/connect', () => ({ allowed: false, status: { message: 'no shells here' } }));
    const r = await srv.call('POST', `${ADM}/validatingwebhookconfigurations`, {
      metadata: { name: 'connect' },
      webhooks: [webhook('connect', '/connect', { rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }], objectSelector: {} })],
    });
    assert.equal(r.status, 201);
    /** A WebSocket exec upgrade as kubectl sends it; the answer when it is not a 101. */
    const exec = (): Promise<{ status: number; body: any }> => // eslint-disable-line @typescript-eslint/no-explicit-any
      new Promise((resolve, reject) => {
        const req = request(`${srv.url}/api/v1/namespaces/default/pods/x/exec?command=sh&command=-c&command=id&stdout=true&container=c`, {
          headers: { Authorization: `Bearer ${srv.token}`, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' },
        });
        req.on('upgrade', (_res, socket) => {
          socket.destroy();
          reject(new Error('upgraded'));
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end();
      });
    const refused = await pollUntil('the CONNECT webhook in force', async () => {
      const x = await exec();
      return x.status === 400 ? x : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(refused.body.message, 'admission webhook "connect.hooks.example.com" denied the request: no shells here');
    const req = wh.received.find((x) => x.path === '/connect')!.request;
    assert.equal(req.operation, 'CONNECT');
    assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'PodExecOptions' });
    assert.equal(req.subResource, 'exec');
    assert.equal(req.options, null);
    assert.deepEqual(req.object.command, ['sh', '-c', 'id']);
    assert.equal(req.object.stdout, true);
    assert.equal(req.object.stdin, false);
    assert.equal(req.object.container, 'c');
  });

  it('never calls webhooks for webhook configurations', async () => {
    handle('/all', () => ({ allowed: false, status: { message: 'everything refused' } }));
    await install('validating', 'everything', [webhook('everything', '/all', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }], objectSelector: {} })]);
    assert.equal((await srv.call('POST', CM('default'), cm('x', 'refused'))).status, 400);
    assert.equal((await srv.call('DELETE', `${ADM}/validatingwebhookconfigurations/everything`)).status, 200);
  });
});
