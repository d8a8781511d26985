// Fuzzing a real `nodelet server` process: a corpus of malformed requests over its TLS port
// (fuzz-corpus.ts plus bodies only the API server reads: deep nesting, patch bombs, objects past
// the size limits). Every HTTP reply must be a 4xx with a Kubernetes Status (but the one that
// creates the patch bombs' target), the process must stay up, log no unhandled rejection or
// uncaught exception, and still answer a normal request at the end. Request bodies that stall
// must not lock writes out (docs/security.md, "Request limits"): the server runs with a small
// mutating in-flight pool and a short request timeout so the slow-body case fits in a test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawExchange, stalledUpload, type RawTarget } from '@nodelet/api/testing';
import { pollUntil } from '@nodelet/base';
import { adminBearerToken } from '../../api/test/integration/processes.js';
import { freePort, startServerProcess, type ServerProcess } from '@nodelet/base/testing';
import { commonCorpus, req, runCorpus, type FuzzCase } from './fuzz-corpus.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
/** The server's --max-mutating-requests-inflight and --request-timeout here. */
const MUTATING_INFLIGHT = 4;
const REQUEST_TIMEOUT_S = 3;

function bodyCorpus(token: string): FuzzCase[] {
  const auth = `Authorization: Bearer ${token}`;
  const post = (type: string, body: string | Buffer, path = CMS): Array<string | Buffer> => req(`POST ${path} HTTP/1.1`, [auth, `Content-Type: ${type}`], body);
  const deepJson = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
  const tenMiB = Buffer.alloc(10 * 1024 * 1024, 0x20);
  const nested = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const jsonPatch = (ops: unknown[] | string): Array<string | Buffer> =>
    req(`PATCH ${CMS}/fuzz-target HTTP/1.1`, [auth, 'Content-Type: application/json-patch+json'], typeof ops === 'string' ? ops : JSON.stringify(ops));
  const configMap = (name: string, data: Record<string, string>): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
  // "Billion laughs": nine levels of anchors, each a list of nine aliases of the one before.
  const aliasBomb = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: laughs}', 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    .concat(Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array.from({ length: 9 }, () => `*a${i}`).join(', ')}]`))
    .join('\n');
  const status = true;
  return [
    { name: 'invalid JSON', parts: post('application/json', '{"apiVersion":"v1",'), expect: 400, status },
    { name: 'JSON array body', parts: post('application/json', '[1,2]'), expect: 400, status },
    { name: 'invalid YAML', parts: post('application/yaml', 'metadata: [unclosed'), expect: 400, status },
    { name: 'two YAML documents', parts: post('application/yaml', 'a: 1\n---\nb: 2\n'), expect: 400, status },
    { name: 'invalid protobuf', parts: post('application/vnd.kubernetes.protobuf', Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0xff, 0xff, 0xff])), expect: 400, status },
    { name: 'protobuf without the magic', parts: post('application/vnd.kubernetes.protobuf', 'not protobuf'), expect: 400, status },
    { name: 'JSON nested 100k levels', parts: post('application/json', deepJson), expect: 400, status },
    { name: 'YAML nested 50k levels', parts: post('application/yaml', `metadata: {name: deep}\ndata: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`), expect: 400, status },
    { name: 'JSON patch nested 100k levels', parts: req(`PATCH ${CMS}/x HTTP/1.1`, [auth, 'Content-Type: application/merge-patch+json'], `{"data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`), expect: 400, status },
    { name: 'JSON nested 5,000 levels', parts: post('application/json', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":${nested(5_000)}}}`), expect: 400, status },
    { name: 'YAML nested 5,000 levels', parts: post('application/yaml', `metadata: {name: deep}\ndata: ${nested(5_000)}\n`), expect: 400, status },
    // Patch bombs against a ConfigMap the caller may patch (created by the first case).
    { name: 'the patch bombs\' target', parts: post('application/json', configMap('fuzz-target', { a: 'x'.repeat(100 * 1024) })), expect: 201, status: false },
    { name: 'JSON patch: 40 copies of 100 KiB', parts: jsonPatch(Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` }))), expect: 422, status },
    { name: 'JSON patch: a map copied into itself 40 times', parts: jsonPatch(Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/x${i}` }))), expect: 422, status },
    { name: 'JSON patch of 10,001 operations', parts: jsonPatch(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'fuzz-target' }))), expect: 413, status },
    { name: 'YAML alias bomb (9^9 expansions)', parts: post('application/yaml', aliasBomb), expect: 400, status },
    { name: 'server-side apply nested 5,000 levels', parts: req(`PATCH ${CMS}/fuzz-target?fieldManager=fuzz HTTP/1.1`, [auth, 'Content-Type: application/apply-patch+yaml'], `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fuzz-target}\ndata: ${nested(5_000)}\n`), expect: 400, status },
    { name: 'JSON patch nested 5,000 levels', parts: jsonPatch(`[{"op":"add","path":"/metadata/labels","value":${nested(5_000)}}]`), expect: 400, status },
    // Objects past the size limits.
    { name: 'a 2 MiB ConfigMap', parts: post('application/json', configMap('big', { a: 'x'.repeat(2 * 1024 * 1024) })), expect: 422, status },
    { name: 'a pod of 10,000 containers (4 MB stored)', parts: post('application/json', JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'wide' }, spec: { containers: Array.from({ length: 10_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox:1' })) } }), PODS), expect: 413, status },
    { name: 'a 10 MiB body', parts: post('application/json', tenMiB), expect: 413, status },
    { name: 'a 10 MiB chunked body', parts: [`POST ${CMS} HTTP/1.1\r\nHost: fuzz\r\n${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, ...Array.from({ length: 10 }, () => `100000\r\n${' '.repeat(0x100000)}\r\n`), '0\r\n\r\n'], expect: 413, status },
    { name: 'a chunk size that is not hex', parts: [`POST ${CMS} HTTP/1.1\r\nHost: fuzz\r\n${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`], expect: 400, status },
    { name: 'text/plain body', parts: post('text/plain', '{}'), expect: 415, status },
    { name: 'invalid JSON patch', parts: req(`PATCH ${CMS}/x HTTP/1.1`, [auth, 'Content-Type: application/json-patch+json'], '{"op":'), expect: '4xx', status },
    { name: 'unknown patch type', parts: req(`PATCH ${CMS}/x HTTP/1.1`, [auth, 'Content-Type: application/x-patch'], '{}'), expect: '4xx', status },
    { name: 'watch from a resourceVersion that is not a number', parts: req(`GET ${CMS}?watch=true&resourceVersion=abc HTTP/1.1`, [auth]), expect: 400, status },
    { name: 'watch with a negative timeout', parts: req(`GET ${CMS}?watch=true&timeoutSeconds=-5 HTTP/1.1`, [auth]), expect: 400, status },
    { name: 'label selector that does not parse', parts: req(`GET ${CMS}?labelSelector=a(b HTTP/1.1`, [auth]), expect: 400, status },
    { name: 'field selector that does not parse', parts: req(`GET ${CMS}?fieldSelector===x HTTP/1.1`, [auth]), expect: 400, status },
    { name: 'exec without an upgrade', parts: req(`GET ${PODS}/p/exec?command=sh HTTP/1.1`, [auth]), expect: '4xx', status },
    { name: 'an unknown API group', parts: req('GET /apis/fuzz.example.com/v1/things HTTP/1.1', [auth]), expect: 404, status },
    { name: 'a 10k-character name', parts: req(`GET ${CMS}/${'n'.repeat(10_000)} HTTP/1.1`, [auth]), expect: '4xx', status },
    { name: 'delete with a malformed body', parts: req(`DELETE ${CMS}/x HTTP/1.1`, [auth, 'Content-Type: application/json'], '{"gracePeriodSeconds":'), expect: 400, status },
  ];
}

describe('fuzzing nodelet server', () => {
  let dir: string;
  let srv: ServerProcess;
  let target: RawTarget;
  let token: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nodelet-fuzz-server-'));
    srv = await startServerProcess({ dataDir: dir, port: await freePort(), args: ['--disable-controllers', '--max-mutating-requests-inflight', String(MUTATING_INFLIGHT), '--request-timeout', `${REQUEST_TIMEOUT_S}s`] });
    token = await adminBearerToken(srv.kubeconfig);
    const url = new URL(srv.url);
    target = { host: url.hostname, port: Number(url.port), tls: { ca: await readFile(join(dir, 'pki', 'ca.crt'), 'utf8') } };
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers every malformed request with a 4xx Status and stays up', async () => {
    const cases = [
      ...commonCorpus({
        token,
        readPath: CMS,
        badlyEncoded: ['/api/v1/namespaces/%', '/api/v1/namespaces/%zz/configmaps', `${CMS}/%E0%A4%A`, '/apis/apps/v1/namespaces/%GG/deployments'],
        execPath: `${PODS}/fuzz/exec?command=sh&stdout=true`,
        statusOnOrdinaryErrors: true,
      }),
      ...bodyCorpus(token),
    ];
    const failures = await runCorpus(target, cases);
    assert.equal(srv.exited(), undefined, `nodelet server exited (${JSON.stringify(srv.exited())}):\n${srv.output().slice(-3000)}`);
    assert.deepEqual(failures, [], failures.join('\n'));
    assert.doesNotMatch(srv.output(), /Unhandled rejection|Uncaught exception/);
    const ok = await rawExchange(target, req(`GET ${CMS} HTTP/1.1`, [`Authorization: Bearer ${token}`]));
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).kind, 'ConfigMapList');
  });

  it('times out request bodies that stall, closes their connections and frees every slot', async (t) => {
    // The attacker: a service account no binding names, which may still create SelfSubjectAccessReviews.
    const tr = await rawExchange(target, req(`POST /api/v1/namespaces/default/serviceaccounts/default/token HTTP/1.1`, [`Authorization: Bearer ${token}`, 'Content-Type: application/json'], '{"spec":{}}'));
    assert.equal(tr.status, 201, tr.body);
    const sa = `Authorization: Bearer ${(JSON.parse(tr.body) as { status: { token: string } }).status.token}`;
    const review = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    const head = `POST ${SSAR} HTTP/1.1\r\nHost: fuzz\r\n${sa}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const uploads = Array.from({ length: MUTATING_INFLIGHT }, () => stalledUpload(target, head, '{"kind":'));
    t.after(() => uploads.forEach((u) => u.socket.destroy()));
    await pollUntil(
      'the stalled uploads to fill the mutating pool',
      async () => (await rawExchange(target, req(`POST ${SSAR} HTTP/1.1`, [sa, 'Content-Type: application/json'], review))).status === 429,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    // Each resolves when its connection closes, which the test never does: the server closed it.
    for (const text of await Promise.all(uploads.map((u) => u.closed))) assert.match(text, /^HTTP\/1\.1 504 /, text);
    const started = Date.now();
    const after = await rawExchange(target, req(`POST ${SSAR} HTTP/1.1`, [sa, 'Content-Type: application/json'], review));
    assert.equal(after.status, 201, `a write after the stalled uploads timed out: ${after.body}`);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    assert.equal(srv.exited(), undefined, srv.output().slice(-3000));
    assert.doesNotMatch(srv.output(), /Unhandled rejection|Uncaught exception/);
  });
});
