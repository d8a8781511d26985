import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ensureLabEncryptionConfig } from './encryption.js';

describe('lab encryption config', () => {
  it('writes an aescbc key (32 random bytes) with identity last, 0600, once', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-lab-enc-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const serverDir = join(dir, 'server');
    const path = ensureLabEncryptionConfig(serverDir);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const first = readFileSync(path, 'utf8');
    const doc = parse(first) as { apiVersion: string; kind: string; resources: Array<{ resources: string[]; providers: Array<Record<string, { keys?: Array<{ name: string; secret: string }> }>> }> };
    assert.equal(doc.apiVersion, 'apiserver.config.k8s.io/v1');
    assert.equal(doc.kind, 'EncryptionConfiguration');
    assert.deepEqual(doc.resources[0]!.resources, ['secrets']);
    const [aescbc, identity] = doc.resources[0]!.providers;
    assert.equal(Buffer.from(aescbc!.aescbc!.keys![0]!.secret, 'base64').length, 32);
    assert.deepEqual(identity, { identity: {} });
    // A later start keeps the key: Secrets written with it stay readable.
    assert.equal(ensureLabEncryptionConfig(serverDir), path);
    assert.equal(readFileSync(path, 'utf8'), first);
  });
});
