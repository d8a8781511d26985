// Audit logging end to end: `nodelet server` started with the --audit-* flags, real HTTPS
// requests, the log rotated by size, and `nodelet audit` answering "who deleted this pod"
// across the rotated files. A bad policy stops the start with a clear message.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { loadKubeconfig } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startServerProcess, type ServerProcess } from '@nodelet/base/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const NODELET = [process.execPath, '--conditions=source', '--import', 'tsx', join(ROOT, 'bin', 'nodelet')];

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
  - level: Request
    resources: [{group: "", resources: [configmaps]}]
  - level: RequestResponse
    resources: [{group: "", resources: [secrets]}]
  - level: Metadata
`;

/** Runs `nodelet <args>`; resolves with its exit code and output. */
function nodelet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODELET[0]!, [...NODELET.slice(1), ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('audit log of nodelet server', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  let call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; auditId: string }>;
  let logPath: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-audit-itest-'));
    logPath = join(dir, 'logs', 'audit.log');
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    server = await startServerProcess({
      dataDir: join(dir, 'data'),
      args: [
        '--disable-controllers',
        '--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath, '--audit-log-maxsize', '1', '--audit-log-maxbackup', '3',
      ],
    });
    const kc = await loadKubeconfig(server.kubeconfig);
    call = (method, path, body, headers = {}) => new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(`${server!.url}${path}`, {
        // The admin kubeconfig's client certificate (CN kubernetes-admin, O system:masters).
        method, ca: kc.ca, cert: kc.cert, key: kc.key, agent: false,
        headers: { ...(text ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } : {}), ...headers },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, auditId: String(res.headers['audit-id'] ?? '') }));
      });
      req.on('error', reject);
      req.end(text);
    });
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const events = (): Array<Record<string, any>> => // eslint-disable-line @typescript-eslint/no-explicit-any
    readdirSync(join(dir, 'logs')).sort().flatMap((f) => readFileSync(join(dir, 'logs', f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>));

  it('logs who deleted a pod, rotates by size, and `nodelet audit` finds the delete in a rotated file', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'victim' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox:latest' }] } };
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    const del = await call('DELETE', '/api/v1/namespaces/default/pods/victim', undefined, { 'Impersonate-User': 'mallory', 'Impersonate-Group': 'system:masters' });
    assert.equal(del.status, 200);
    const ev = await pollUntil('the delete event', () => events().find((e) => e.auditID === del.auditId && e.stage === 'ResponseComplete'), { timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(ev.level, 'Metadata');
    assert.equal(ev.verb, 'delete');
    assert.equal(ev.user.username, 'kubernetes-admin');
    assert.equal(ev.impersonatedUser.username, 'mallory');
    assert.deepEqual(ev.objectRef, { resource: 'pods', namespace: 'default', name: 'victim', apiVersion: 'v1' });
    assert.equal(statSync(logPath).mode & 0o777, 0o600);

    // A Secret at RequestResponse: its body still stays out.
    const value = 'itest-secret-value-7f3a';
    const s = await call('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { password: value } });
    assert.equal(s.status, 201);
    await pollUntil('the secret event', () => events().some((e) => e.auditID === s.auditId), { timeoutMs: 10_000, intervalMs: 50 });

    // Four ConfigMaps of ~300 KB at level Request: past 1 MB the log rotates once.
    for (let i = 0; i < 4; i++) {
      const r = await call('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { blob: 'x'.repeat(300_000) } });
      assert.equal(r.status, 201);
    }
    const files = await pollUntil('a rotated audit log', () => {
      const names = readdirSync(join(dir, 'logs'));
      return names.length >= 2 && names;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    assert.ok(files.includes('audit.log'));
    assert.ok(files.some((n) => /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/.test(n)), files.join(' '));
    for (const f of files) assert.ok(statSync(join(dir, 'logs', f)).size <= 1024 * 1024, `${f} is within --audit-log-maxsize`);
    const all = events();
    assert.ok(!all.some((e) => JSON.stringify(e).includes(value)), 'no Secret value in any file');
    assert.ok(all.some((e) => e.objectRef?.name === 'big-0' && e.requestObject?.data?.blob?.length === 300_000), 'Request level logged the ConfigMap body');
    assert.equal(new Set(all.map((e) => e.auditID)).size, all.length, 'RequestReceived omitted: one line per request');

    assert.ok(!readFileSync(logPath, 'utf8').includes(del.auditId), 'the delete is in a rotated file now');
    const out = await nodelet(['audit', '--log', logPath, '--verb', 'delete', '--resource', 'pods', '--name', 'victim', '--since', '1h']);
    assert.equal(out.code, 0, out.stderr);
    const rows = out.stdout.trim().split('\n');
    assert.equal(rows.length, 2, out.stdout);
    assert.match(rows[1]!, /kubernetes-admin \(as mallory\) +delete +pods +default +victim +200 +127\.0\.0\.1 +[0-9a-f-]{36}$/);
    assert.ok(rows[1]!.endsWith(del.auditId), 'the Audit-ID header of the delete');
  });

  it('refuses to start with a bad policy, naming the field', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Everything\n');
    const r = await nodelet(['server', '--data-dir', join(dir, 'bad-data'), '--audit-policy-file', join(dir, 'bad.yaml'), '--audit-log-path', join(dir, 'bad.log')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--audit-policy-file ".*bad\.yaml": rules\[0\]\.level: Unsupported value: "Everything"/);
    const alone = await nodelet(['server', '--data-dir', join(dir, 'bad-data'), '--audit-log-path', join(dir, 'bad.log')]);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--audit-log-path needs --audit-policy-file/);
  });
});
