// Response compression as kube-apiserver does it: a reply of 128 KiB or more is gzipped when the
// client accepts gzip (kubectl's Go transport and browsers do), and sent as it is otherwise;
// smaller replies are never compressed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';
import { GZIP_THRESHOLD_BYTES } from './respond.js';

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(srv: TestApiServer, path: string, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, srv.url), { headers: { Authorization: `Bearer ${srv.token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

describe('response compression', () => {
  let srv: TestApiServer;
  before(async () => {
    srv = await startTestApiServer();
    // 40 ConfigMaps of 4 KiB each: a list of about 170 KiB, past the threshold.
    for (let i = 0; i < 40; i++) {
      const r = await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(4096) } });
      assert.equal(r.status, 201);
    }
  });
  after(() => srv?.close());

  it('gzips a large list for a client that accepts gzip, and only then', async () => {
    const plain = await get(srv, '/api/v1/namespaces/default/configmaps', {});
    assert.equal(plain.status, 200);
    assert.ok(plain.body.byteLength >= GZIP_THRESHOLD_BYTES, `the list is ${plain.body.byteLength} B`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');

    const zipped = await get(srv, '/api/v1/namespaces/default/configmaps', { 'Accept-Encoding': 'gzip' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(Number(zipped.headers['content-length']), zipped.body.byteLength);
    assert.ok(zipped.body.byteLength < plain.body.byteLength / 10);
    assert.deepEqual(JSON.parse(gunzipSync(zipped.body).toString()).items.length, JSON.parse(plain.body.toString()).items.length);

    const refused = await get(srv, '/api/v1/namespaces/default/configmaps', { 'Accept-Encoding': 'gzip;q=0, identity' });
    assert.equal(refused.headers['content-encoding'], undefined);
  });

  it('never compresses a small reply', async () => {
    const one = await get(srv, '/api/v1/namespaces/default/configmaps/big-0', { 'Accept-Encoding': 'gzip' });
    assert.equal(one.status, 200);
    assert.equal(one.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(one.body.toString()).metadata.name, 'big-0');
  });
});
