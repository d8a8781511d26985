// Audit events of a real API server (plain HTTP on port 0, SQLite in a temp dir): each level's
// content, the Audit-ID header, sensitive bodies, failed logins, impersonation, long-running stages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { startTestApiServer, type TestApiServer, type TestReply } from '../testing/test-server.js';
import { parseAuditPolicy } from './policy.js';
import type { AuditEvent } from './event.js';

const ADMIN = 'audit-admin-token';
const ALICE = 'audit-alice-token';
const EVE = 'audit-eve-token';
/** Appears in a Secret's data (base64) and stringData: neither form may reach the log. */
const SECRET_VALUE = 'hunter2-very-secret-value';

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
  - level: None
    users: ["system:admin"]
    verbs: [get]
  - level: RequestResponse
    namespaces: [full]
    omitManagedFields: true
  - level: Request
    namespaces: [req]
  - level: Metadata
    omitStages: [RequestReceived]
    namespaces: [quiet]
  - level: Metadata
`;

describe('audit logging in the API server', () => {
  let srv: TestApiServer;
  let dir: string;
  let logPath: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-audit-'));
    logPath = join(dir, 'audit.log');
    srv = await startTestApiServer({
      tokens: new Map([
        [ADMIN, { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] }],
        [ALICE, { name: 'alice', groups: ['system:masters', 'system:authenticated'] }],
        [EVE, { name: 'eve', groups: ['system:authenticated'] }],
      ]),
      audit: { policy: parseAuditPolicy(POLICY), path: logPath, rotation: { maxSizeMB: 0, maxAgeDays: 0, maxBackups: 0 } },
    });
    for (const ns of ['full', 'req', 'quiet']) {
      assert.equal((await call(ADMIN, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
      // ServiceAccount admission wants the namespace's default account (no controllers run here).
      assert.equal((await call(ADMIN, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
    }
  });
  after(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestReply & { auditId: string | null }> {
    const r = await srv.call(method, path, body, { token, headers: { 'User-Agent': 'audit-test/1.0', ...headers } });
    return { ...r, auditId: r.headers.get('audit-id') };
  }
  const events = (): AuditEvent[] => readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
  /** The events of one request, once its last stage is written (the server writes it as the response closes). */
  const eventsOf = (auditID: string, last = 'ResponseComplete'): Promise<AuditEvent[]> =>
    pollUntil(`the ${last} event of ${auditID}`, () => {
      const mine = events().filter((e) => e.auditID === auditID);
      return mine.some((e) => e.stage === last) && mine;
    }, { timeoutMs: 5000, intervalMs: 20 });
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:latest' }] } });
  const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { password: Buffer.from(SECRET_VALUE).toString('base64') }, stringData: { other: SECRET_VALUE } });

  it('Metadata: who, what, which object and the answer; no bodies; Audit-ID matches the header', async () => {
    const created = await call(ALICE, 'POST', '/api/v1/namespaces/default/pods', pod('meta-pod'));
    assert.equal(created.status, 201);
    assert.match(created.auditId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const evs = await eventsOf(created.auditId!);
    assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
    const done = evs[1]!;
    assert.equal(done.kind, 'Event');
    assert.equal(done.apiVersion, 'audit.k8s.io/v1');
    assert.equal(done.level, 'Metadata');
    assert.equal(done.verb, 'create');
    assert.equal(done.requestURI, '/api/v1/namespaces/default/pods');
    assert.deepEqual(done.user, { username: 'alice', groups: ['system:masters', 'system:authenticated'] });
    assert.deepEqual(done.sourceIPs, ['127.0.0.1']);
    assert.equal(done.userAgent, 'audit-test/1.0');
    assert.deepEqual(done.objectRef, { resource: 'pods', namespace: 'default', name: 'meta-pod', apiVersion: 'v1' }, 'the name comes from the body');
    assert.deepEqual(done.responseStatus, { metadata: {}, code: 201 });
    assert.equal(done.requestObject, undefined);
    assert.equal(done.responseObject, undefined);
    assert.match(done.requestReceivedTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    assert.ok(done.stageTimestamp >= done.requestReceivedTimestamp);

    const deleted = await call(ALICE, 'DELETE', '/api/v1/namespaces/default/pods/meta-pod');
    assert.equal(deleted.status, 200);
    const del = (await eventsOf(deleted.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(del.verb, 'delete');
    assert.deepEqual(del.objectRef, { resource: 'pods', namespace: 'default', name: 'meta-pod', apiVersion: 'v1' });
    assert.equal(del.annotations?.['authorization.k8s.io/decision'], 'allow');
    assert.equal(evs[0]!.annotations, undefined, 'RequestReceived comes before authorization');
  });

  it('a Status reply is in responseStatus at Metadata; a level-None request writes nothing', async () => {
    const missing = await call(ALICE, 'GET', '/api/v1/namespaces/default/pods/nope');
    assert.equal(missing.status, 404);
    const done = (await eventsOf(missing.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.deepEqual(done.responseStatus, { metadata: {}, status: 'Failure', message: 'pods "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'pods' }, code: 404 });
    const denied = await call(EVE, 'DELETE', '/api/v1/namespaces/default/pods/x');
    assert.equal(denied.status, 403);
    const forbid = (await eventsOf(denied.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(forbid.annotations?.['authorization.k8s.io/decision'], 'forbid');
    assert.equal(forbid.responseStatus?.reason, 'Forbidden');
    assert.equal(forbid.user.username, 'eve');
    const unaudited = await call(ADMIN, 'GET', '/api/v1/namespaces/default');
    assert.equal(unaudited.status, 200);
    assert.ok(unaudited.auditId, 'the header is set whatever the level');
    // Written in order: a later request's event is in the file, the earlier one is not.
    const marker = await call(ALICE, 'GET', '/api/v1/namespaces/default');
    await eventsOf(marker.auditId!);
    assert.equal(events().filter((e) => e.auditID === unaudited.auditId).length, 0);
  });

  it('Request logs the request body; RequestResponse the response too (managedFields omitted as asked)', async () => {
    const r = await call(ALICE, 'POST', '/api/v1/namespaces/req/pods', pod('req-pod'));
    assert.equal(r.status, 201);
    const req = (await eventsOf(r.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(req.level, 'Request');
    assert.deepEqual(req.requestObject, pod('req-pod'));
    assert.equal(req.responseObject, undefined);

    const f = await call(ALICE, 'POST', '/api/v1/namespaces/full/pods?fieldManager=audit-test', pod('full-pod'));
    assert.equal(f.status, 201);
    assert.ok(f.json.metadata.managedFields, 'the reply has managedFields');
    const full = (await eventsOf(f.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(full.level, 'RequestResponse');
    const resp = full.responseObject as { kind: string; metadata: Record<string, unknown> };
    assert.equal(resp.kind, 'Pod');
    assert.equal(resp.metadata.uid, f.json.metadata.uid);
    assert.equal(resp.metadata.managedFields, undefined);
    assert.equal(full.objectRef?.namespace, 'full');
  });

  it('never logs a Secret\'s body, whatever the level', async () => {
    for (const ns of ['full', 'req', 'default']) {
      const c = await call(ALICE, 'POST', `/api/v1/namespaces/${ns}/secrets`, secret('s1'));
      assert.equal(c.status, 201);
      const g = await call(ALICE, 'GET', `/api/v1/namespaces/${ns}/secrets/s1`);
      const l = await call(ALICE, 'GET', `/api/v1/namespaces/${ns}/secrets`);
      const d = await call(ALICE, 'DELETE', `/api/v1/namespaces/${ns}/secrets/s1`);
      for (const x of [c, g, l, d]) {
        const done = (await eventsOf(x.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
        assert.equal(done.requestObject, undefined);
        assert.equal(done.responseObject, undefined);
        assert.equal(done.objectRef?.resource, 'secrets');
      }
    }
    const text = readFileSync(logPath, 'utf8');
    assert.ok(!text.includes(SECRET_VALUE), 'the value');
    assert.ok(!text.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'its base64');
    assert.ok(!text.includes(ALICE) && !text.includes(ADMIN), 'no bearer token');
  });

  it('a failed login is one ResponseStarted event with no user', async () => {
    const r = await call('not-a-token', 'DELETE', '/api/v1/namespaces/default/pods/x');
    assert.equal(r.status, 401);
    const [ev, ...rest] = await eventsOf(r.auditId!, 'ResponseStarted');
    assert.equal(rest.length, 0);
    assert.deepEqual(ev!.user, {});
    assert.equal(ev!.verb, 'delete');
    assert.equal(ev!.responseStatus?.code, 401);
    assert.equal(ev!.responseStatus?.reason, 'Unauthorized');
    assert.ok(!readFileSync(logPath, 'utf8').includes('not-a-token'));
  });

  it('impersonation: the policy sees the caller, the event names both', async () => {
    const r = await call(ADMIN, 'GET', '/api/v1/namespaces/default/pods/none', undefined, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' });
    assert.equal(r.status, 404);
    // system:admin's gets are None in the policy, impersonating or not.
    const marker = await call(ALICE, 'GET', '/api/v1/namespaces/default');
    await eventsOf(marker.auditId!);
    assert.equal(events().filter((e) => e.auditID === r.auditId).length, 0);
    const d = await call(ADMIN, 'DELETE', '/api/v1/namespaces/default/pods/none', undefined, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' });
    assert.equal(d.status, 404);
    const ev = (await eventsOf(d.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(ev.user.username, 'system:admin');
    assert.equal(ev.impersonatedUser?.username, 'bob');
  });

  it('a watch has ResponseStarted when its head goes out and ResponseComplete when it ends; omitStages drops stages', async () => {
    const ac = new AbortController();
    const r = await fetch(`${srv.url}/api/v1/namespaces/quiet/pods?watch=true`, { headers: { Authorization: `Bearer ${ALICE}` }, signal: ac.signal });
    assert.equal(r.status, 200);
    const id = r.headers.get('audit-id')!;
    const started = await eventsOf(id, 'ResponseStarted');
    assert.deepEqual(started.map((e) => e.stage), ['ResponseStarted'], 'RequestReceived is omitted in namespace quiet');
    assert.equal(started[0]!.verb, 'watch');
    assert.deepEqual(started[0]!.responseStatus, { metadata: {}, code: 200 });
    ac.abort();
    await r.body?.cancel().catch(() => undefined);
    const all = await eventsOf(id);
    assert.deepEqual(all.map((e) => e.stage), ['ResponseStarted', 'ResponseComplete']);
  });

  it('admission annotations reach the event: PodSecurity\'s enforce-policy and audit-violations', async () => {
    const labels = { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted' };
    assert.equal((await call(ADMIN, 'POST', '/api/v1/namespaces', { metadata: { name: 'psa', labels } })).status, 201);
    assert.equal((await call(ADMIN, 'POST', '/api/v1/namespaces/psa/serviceaccounts', { metadata: { name: 'default' } })).status, 201);
    const created = await call(ALICE, 'POST', '/api/v1/namespaces/psa/pods', pod('psa-pod'));
    assert.equal(created.status, 201);
    const done = (await eventsOf(created.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(done.annotations?.['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest');
    assert.match(done.annotations?.['pod-security.kubernetes.io/audit-violations'] ?? '', /^would violate PodSecurity "restricted:latest": /);
    const refused = await call(ALICE, 'POST', '/api/v1/namespaces/psa/pods', { ...pod('psa-privileged'), spec: { containers: [{ name: 'c', image: 'busybox:latest', securityContext: { privileged: true } }] } });
    assert.equal(refused.status, 403);
    const no = (await eventsOf(refused.auditId!)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(no.responseStatus?.code, 403);
    assert.equal(no.annotations?.['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest');
  });

  it('keeps the Audit-ID the client sent', async () => {
    const r = await call(ALICE, 'GET', '/api/v1/namespaces/default', undefined, { 'Audit-ID': 'client-chosen-id' });
    assert.equal(r.auditId, 'client-chosen-id');
    await eventsOf('client-chosen-id');
  });
});
