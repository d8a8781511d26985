// The registry against real HTTP on a loopback port (distribution-spec pull endpoints).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { sha256Digest } from './digest.js';
import { initStore, putBlob, tagImage } from './layout.js';
import { MediaType } from './media-types.js';
import { parseRange, type Registry, startRegistry } from './registry.js';
import { listRegistryImages } from './registry-list.js';
import { mirroredRepositoryOf, storeNameOf } from './store-name.js';
import { cleanups } from '@nodelet/base/testing';

interface Fixture {
  root: string;
  reg: Registry;
  layer: Buffer;
  layerDigest: string;
  manifestDigest: string;
  manifestBody: string;
}

async function fixture(t: { after(fn: () => Promise<void>): void }, basicAuth?: { username: string; password: string }): Promise<Fixture> {
  const cleanup = cleanups(t);
  const root = await mkdtemp(join(tmpdir(), 'nodelet-registry-test-'));
  cleanup(() => rm(root, { recursive: true, force: true }));
  await initStore(root);
  const layer = Buffer.from('0123456789'.repeat(100));
  const l = await putBlob(root, layer);
  const c = await putBlob(root, JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [l.digest] } }));
  const manifestBody = JSON.stringify({
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: MediaType.ociConfig, ...c },
    layers: [{ mediaType: MediaType.ociLayer, ...l }],
  });
  const m = await putBlob(root, manifestBody);
  await tagImage(root, 'lab/app', 'v1', { mediaType: MediaType.ociManifest, ...m });
  await tagImage(root, 'lab/app', 'v2', { mediaType: MediaType.ociManifest, ...m });
  const reg = await startRegistry({ root, basicAuth });
  cleanup(() => reg.close());
  return { root, reg, layer, layerDigest: l.digest, manifestDigest: m.digest, manifestBody };
}

async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { errors: { code: string; message: string }[] };
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.ok(body.errors[0]!.message.length > 0);
  return body.errors[0]!.code;
}

test('GET /v2/ answers 200 with the API version header', async (t) => {
  const { reg } = await fixture(t);
  const res = await fetch(`${reg.url}/v2/`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('docker-distribution-api-version'), 'registry/2.0');
  assert.deepEqual(await res.json(), {});
  assert.match(reg.hostPort, /^127\.0\.0\.1:\d+$/);
});

test('manifests by tag and by digest, HEAD and GET, with media type, length and digest', async (t) => {
  const { reg, manifestDigest, manifestBody } = await fixture(t);
  for (const ref of ['v1', manifestDigest]) {
    const head = await fetch(`${reg.url}/v2/lab/app/manifests/${ref}`, { method: 'HEAD' });
    assert.equal(head.status, 200, ref);
    assert.equal(head.headers.get('content-type'), MediaType.ociManifest);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(manifestBody)));
    assert.equal(head.headers.get('docker-content-digest'), manifestDigest);
    assert.equal(await head.text(), '');
    const get = await fetch(`${reg.url}/v2/lab/app/manifests/${ref}`);
    const body = await get.text();
    assert.equal(body, manifestBody);
    assert.equal(sha256Digest(body), manifestDigest);
  }
});

test('blobs: full GET, HEAD, byte ranges (206 + Content-Range) and unsatisfiable ranges (416)', async (t) => {
  const { reg, layer, layerDigest } = await fixture(t);
  const url = `${reg.url}/v2/lab/app/blobs/${layerDigest}`;
  const full = await fetch(url);
  assert.equal(full.status, 200);
  assert.equal(full.headers.get('docker-content-digest'), layerDigest);
  assert.equal(full.headers.get('content-length'), String(layer.length));
  assert.deepEqual(Buffer.from(await full.arrayBuffer()), layer);

  const head = await fetch(url, { method: 'HEAD' });
  assert.equal(head.headers.get('content-length'), String(layer.length));
  assert.equal(head.headers.get('accept-ranges'), 'bytes');

  const resume = await fetch(url, { headers: { Range: 'bytes=990-' } });
  assert.equal(resume.status, 206);
  assert.equal(resume.headers.get('content-range'), `bytes 990-999/${layer.length}`);
  assert.equal(await resume.text(), '0123456789');

  const middle = await fetch(url, { headers: { Range: 'bytes=5-7' } });
  assert.equal(middle.headers.get('content-length'), '3');
  assert.equal(await middle.text(), '567');

  const tooFar = await fetch(url, { headers: { Range: 'bytes=5000-' } });
  assert.equal(tooFar.status, 416);
  assert.equal(tooFar.headers.get('content-range'), `bytes */${layer.length}`);
  await tooFar.body?.cancel();
});

test('unknown things give the spec error codes', async (t) => {
  const { reg, layerDigest } = await fixture(t);
  const missing = 'sha256:' + '0'.repeat(64);
  const cases: [string, number, string][] = [
    ['/v2/lab/app/manifests/v9', 404, 'MANIFEST_UNKNOWN'],
    [`/v2/lab/app/manifests/${missing}`, 404, 'MANIFEST_UNKNOWN'],
    [`/v2/lab/app/manifests/${layerDigest}`, 404, 'MANIFEST_UNKNOWN'], // a blob that is not a manifest
    [`/v2/lab/app/blobs/${missing}`, 404, 'BLOB_UNKNOWN'],
    ['/v2/lab/other/manifests/v1', 404, 'NAME_UNKNOWN'],
    [`/v2/nope/blobs/${layerDigest}`, 404, 'NAME_UNKNOWN'],
    ['/v2/lab/app/blobs/sha256:xyz', 400, 'DIGEST_INVALID'],
    ['/v2/lab/app/manifests/sha256:short', 400, 'DIGEST_INVALID'],
    ['/v2/Lab/app/manifests/v1', 400, 'NAME_INVALID'],
    ['/v2/lab/app/manifests/-bad', 400, 'TAG_INVALID'],
  ];
  for (const [path, status, code] of cases) {
    const res = await fetch(reg.url + path);
    assert.equal(res.status, status, path);
    assert.equal(await errorCode(res), code, path);
  }
});

test('is read-only: writes get 405 UNSUPPORTED', async (t) => {
  const { reg, manifestDigest } = await fixture(t);
  for (const [method, path] of [
    ['PUT', '/v2/lab/app/manifests/v3'],
    ['POST', '/v2/lab/app/blobs/uploads/'],
    ['DELETE', `/v2/lab/app/manifests/${manifestDigest}`],
    ['PATCH', '/v2/lab/app/blobs/uploads/x'],
  ] as const) {
    const res = await fetch(reg.url + path, { method, body: method === 'DELETE' ? undefined : 'x' });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(await errorCode(res), 'UNSUPPORTED');
  }
  const still = await fetch(`${reg.url}/v2/lab/app/manifests/v1`, { method: 'HEAD' });
  assert.equal(still.status, 200);
});

test('tags/list and _catalog list tags and repositories', async (t) => {
  const { reg } = await fixture(t);
  const res = await fetch(`${reg.url}/v2/lab/app/tags/list`);
  assert.deepEqual(await res.json(), { name: 'lab/app', tags: ['v1', 'v2'] });
  const catalog = await fetch(`${reg.url}/v2/_catalog`);
  assert.deepEqual(await catalog.json(), { repositories: ['lab/app'] });
});

test('close() is idempotent and ends keep-alive connections', async (t) => {
  const { reg } = await fixture(t);
  await fetch(`${reg.url}/v2/`).then((r) => r.text());
  await Promise.all([reg.close(), reg.close()]);
  await assert.rejects(fetch(`${reg.url}/v2/`));
});

test('parseRange', () => {
  assert.deepEqual(parseRange('bytes=0-', 10), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=2-4', 10), { start: 2, end: 4 });
  assert.deepEqual(parseRange('bytes=2-400', 10), { start: 2, end: 9 });
  assert.deepEqual(parseRange('bytes=-3', 10), { start: 7, end: 9 });
  assert.equal(parseRange('bytes=10-', 10), undefined);
  assert.equal(parseRange('bytes=5-2', 10), undefined);
  assert.equal(parseRange('bytes=0-1,3-4', 10), undefined);
  assert.equal(parseRange('items=0-1', 10), undefined);
  assert.equal(parseRange('bytes=-', 10), undefined);
});

test('a port in use is ERR_UNAVAILABLE naming the address', async (t) => {
  const { reg } = await fixture(t);
  await assert.rejects(startRegistry({ root: '/nonexistent', port: reg.port }), (err: Error) => {
    return hasCode(err, 'ERR_UNAVAILABLE') && err.message === `registry cannot listen on 127.0.0.1:${reg.port}: the address is in use (another registry or nodelet server?)`;
  });
});

test('listRegistryImages reads catalog, tags and manifests over HTTP', async (t) => {
  const { reg, manifestDigest, layer, manifestBody } = await fixture(t);
  const images = await listRegistryImages(reg.hostPort);
  assert.deepEqual(images.map((i) => [i.name, i.tag, i.digest, i.mediaType]), [
    ['lab/app', 'v1', manifestDigest, MediaType.ociManifest],
    ['lab/app', 'v2', manifestDigest, MediaType.ociManifest],
  ]);
  assert.ok(images[0]!.contentSize > layer.length + Buffer.byteLength(manifestBody));
  await reg.close();
  await assert.rejects(listRegistryImages(reg.url), (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && err.message.startsWith(`registry ${reg.url} is unreachable`));
});

test('a manifest without a mediaType field is served with the OCI type its shape gives', async (t) => {
  const cleanup = cleanups(t);
  const root = await mkdtemp(join(tmpdir(), 'nodelet-registry-test-'));
  cleanup(() => rm(root, { recursive: true, force: true }));
  await initStore(root);
  const l = await putBlob(root, 'layer');
  const c = await putBlob(root, '{}');
  const m = await putBlob(root, JSON.stringify({ schemaVersion: 2, config: { mediaType: MediaType.ociConfig, ...c }, layers: [{ mediaType: MediaType.ociLayer, ...l }] }));
  const i = await putBlob(root, JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: MediaType.ociManifest, ...m }] }));
  await tagImage(root, 'bare', 'm', { mediaType: MediaType.ociManifest, ...m });
  await tagImage(root, 'bare', 'i', { mediaType: MediaType.ociIndex, ...i });
  const reg = await startRegistry({ root });
  cleanup(() => reg.close());
  for (const [tag, type] of [['m', MediaType.ociManifest], ['i', MediaType.ociIndex]] as const) {
    const res = await fetch(`${reg.url}/v2/bare/manifests/${tag}`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), type);
  }
});

test('basicAuth: requests without the credentials get 401 UNAUTHORIZED with a Basic challenge', async (t) => {
  const { reg, manifestDigest } = await fixture(t, { username: 'puller', password: 's3cret' });
  const anonymous = await fetch(`${reg.url}/v2/lab/app/manifests/v1`);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers.get('www-authenticate'), 'Basic realm="nodelet registry"');
  assert.equal(await errorCode(anonymous), 'UNAUTHORIZED');
  const wrong = await fetch(`${reg.url}/v2/`, { headers: { Authorization: `Basic ${Buffer.from('puller:nope').toString('base64')}` } });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const ok = await fetch(`${reg.url}/v2/lab/app/manifests/v1`, { headers: { Authorization: `Basic ${Buffer.from('puller:s3cret').toString('base64')}` } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('docker-content-digest'), manifestDigest);
  await ok.body?.cancel();
});

test('mirror naming: the ns of an upstream name maps to the store name it was imported under', () => {
  const cases: [string, string, string][] = [
    ['docker.io', 'library/busybox', 'busybox'],
    ['docker.io', 'acme/web', 'acme/web'],
    ['index.docker.io', 'library/busybox', 'busybox'],
    ['quay.io', 'x/y', 'x/y'],
    ['quay.io', 'library/busybox', 'library/busybox'], // only Docker Hub's official images drop library/
    ['registry.k8s.io', 'pause', 'pause'],
    ['ghcr.io', 'acme/tools/web', 'acme/tools/web'],
    ['127.0.0.1:5000', 'lab/web', 'lab/web'],
  ];
  for (const [ns, name, want] of cases) {
    assert.equal(mirroredRepositoryOf(ns, name), want, `${ns}/${name}`);
    // The same mapping as an import of that reference: what is imported is what the mirror serves.
    assert.equal(mirroredRepositoryOf(ns, name), storeNameOf(`${ns}/${name}:1`).name);
  }
  for (const [ns, name] of [['library', 'busybox'], ['docker.io', 'Busy/box'], ['docker.io', ''], ['', 'busybox']] as const) {
    assert.throws(() => mirroredRepositoryOf(ns, name), (e: unknown) => hasCode(e, 'ERR_INVALID_ARGUMENT'), `${ns}/${name}`);
  }
});

test('a mirror request (?ns=) is served from the store name: docker.io library/busybox is busybox, quay.io x/y is x/y', async (t) => {
  const { root, reg, manifestDigest, manifestBody, layerDigest } = await fixture(t);
  const desc = { mediaType: MediaType.ociManifest, digest: manifestDigest, size: Buffer.byteLength(manifestBody) };
  await tagImage(root, 'busybox', 'latest', desc);
  await tagImage(root, 'x/y', '1', desc);

  for (const path of ['/v2/library/busybox/manifests/latest?ns=docker.io', '/v2/x/y/manifests/1?ns=quay.io', `/v2/library/busybox/manifests/${manifestDigest}?ns=docker.io`]) {
    const res = await fetch(reg.url + path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('docker-content-digest'), manifestDigest, path);
    assert.equal(await res.text(), manifestBody, path);
  }
  const blob = await fetch(`${reg.url}/v2/library/busybox/blobs/${layerDigest}?ns=docker.io`);
  assert.equal(blob.status, 200);
  await blob.body?.cancel();
  const tags = await fetch(`${reg.url}/v2/x/y/tags/list?ns=quay.io`);
  assert.deepEqual(await tags.json(), { name: 'x/y', tags: ['1'] });

  const cases: [string, number, string][] = [
    ['/v2/library/busybox/manifests/latest', 404, 'NAME_UNKNOWN'], // no ns: the store's own names only
    ['/v2/library/busybox/manifests/latest?ns=quay.io', 404, 'NAME_UNKNOWN'], // library/ is Docker Hub's alone
    ['/v2/library/busybox/manifests/nope?ns=docker.io', 404, 'MANIFEST_UNKNOWN'],
    ['/v2/busybox/manifests/latest?ns=library', 400, 'NAME_INVALID'], // ns must be a registry host
  ];
  for (const [path, status, code] of cases) {
    const res = await fetch(reg.url + path);
    assert.equal(res.status, status, path);
    assert.equal(await errorCode(res), code, path);
  }
});
