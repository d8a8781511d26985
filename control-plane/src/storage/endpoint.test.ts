import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createCa, issueCertificate, loadCa } from '../pki/certs.js';
import { openStore, parseDatastoreEndpoint } from './endpoint.js';

const isInvalid = (pattern: RegExp) => (err: Error & { code?: string }) => err.code === 'ERR_INVALID_ARGUMENT' && pattern.test(err.message);

describe('parseDatastoreEndpoint', () => {
  it('defaults to <data-dir>/state.db', () => {
    assert.deepEqual(parseDatastoreEndpoint(undefined, '/var/lib/nodelet'), { kind: 'sqlite', path: '/var/lib/nodelet/state.db' });
    assert.deepEqual(parseDatastoreEndpoint('', '/d'), { kind: 'sqlite', path: '/d/state.db' });
  });

  it('parses sqlite:// with absolute and data-dir-relative paths', () => {
    assert.deepEqual(parseDatastoreEndpoint('sqlite:///srv/k.db', '/d'), { kind: 'sqlite', path: '/srv/k.db' });
    assert.deepEqual(parseDatastoreEndpoint('sqlite://other.db', '/d'), { kind: 'sqlite', path: '/d/other.db' });
  });

  it('parses etcd:// host lists and http(s) URLs', () => {
    assert.deepEqual(parseDatastoreEndpoint('etcd://127.0.0.1:2379,10.0.0.2:2379', '/d'), {
      kind: 'etcd',
      endpoints: ['http://127.0.0.1:2379', 'http://10.0.0.2:2379'],
      tls: false,
    });
    assert.deepEqual(parseDatastoreEndpoint('https://etcd.lab:2379', '/d'), { kind: 'etcd', endpoints: ['https://etcd.lab:2379'], tls: true });
  });

  it('etcd:// with a TLS flag means https://', () => {
    assert.deepEqual(parseDatastoreEndpoint('etcd://10.0.0.1:2379,10.0.0.2:2379', '/d', { caFile: '/pki/etcd-ca.crt' }), {
      kind: 'etcd',
      endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
      tls: true,
    });
    assert.deepEqual(parseDatastoreEndpoint('https://e:2379', '/d', { certFile: '/c', keyFile: '/k' }), { kind: 'etcd', endpoints: ['https://e:2379'], tls: true });
  });

  it('refuses TLS flag combinations that cannot work, naming the flags', () => {
    assert.throws(() => parseDatastoreEndpoint('http://e:2379', '/d', { caFile: '/ca' }), isInvalid(/http:\/\/ is plaintext/));
    assert.throws(() => parseDatastoreEndpoint('', '/d', { caFile: '/ca' }), isInvalid(/apply only to an etcd/));
    assert.throws(() => parseDatastoreEndpoint('sqlite://x.db', '/d', { certFile: '/c', keyFile: '/k' }), isInvalid(/apply only to an etcd/));
    assert.throws(() => parseDatastoreEndpoint('etcd://e:2379', '/d', { certFile: '/c' }), isInvalid(/--etcd-certfile and --etcd-keyfile must be given together/));
    assert.throws(() => parseDatastoreEndpoint('https://e:2379', '/d', { keyFile: '/k' }), isInvalid(/must be given together/));
    assert.throws(() => parseDatastoreEndpoint('http://a:1,https://b:2', '/d'), isInvalid(/same scheme/));
  });

  it('rejects what it cannot use, saying what would work', () => {
    for (const bad of ['mysql://x', 'sqlite://', 'etcd://', 'etcd://hostonly', 'http://a:2379,nope:']) {
      assert.throws(() => parseDatastoreEndpoint(bad, '/d'), (err: Error & { code?: string }) => err.code === 'ERR_INVALID_ARGUMENT', bad);
    }
  });
});

describe('openStore etcd TLS files', () => {
  it('refuses unreadable files, a CA file without a certificate and a key that is not the certificate\'s', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-etcd-tls-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const caPair = await createCa('etcd-ca');
    const ca = await loadCa(caPair);
    const a = await issueCertificate(ca, { commonName: 'a', usage: 'client' });
    const b = await issueCertificate(ca, { commonName: 'b', usage: 'client' });
    const f = (name: string) => join(dir, name);
    await writeFile(f('ca.crt'), caPair.certPem);
    await writeFile(f('a.crt'), a.certPem);
    await writeFile(f('b.key'), b.keyPem);
    await writeFile(f('junk'), 'not a certificate\n');
    const open = (etcdTls: { caFile?: string; certFile?: string; keyFile?: string }) => () => openStore('etcd://127.0.0.1:1', { dataDir: dir, etcdTls, compactor: false });
    assert.throws(open({ caFile: f('missing.crt') }), isInvalid(/cannot read --etcd-cafile ".*missing.crt": ENOENT/));
    assert.throws(open({ caFile: f('junk') }), isInvalid(/--etcd-cafile ".*junk" holds no PEM certificate/));
    assert.throws(open({ caFile: f('ca.crt'), certFile: f('a.crt'), keyFile: f('b.key') }), isInvalid(/do not form a pair: the private key does not belong/));
    assert.throws(open({ caFile: f('ca.crt'), certFile: f('junk'), keyFile: f('b.key') }), isInvalid(/not a PEM X.509 certificate/));
  });
});
