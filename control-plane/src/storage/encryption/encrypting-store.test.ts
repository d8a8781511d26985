import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { errCode } from '@nodelet/base';
import { dec, enc, summarize, takeEvents } from '../testing/helpers.js';
import { createTempSqliteStore } from '../testing/sqlite.js';
import { parseEncryptionConfig } from './config.js';
import { createEncryptingStore } from './encrypting-store.js';

function rules(keyName: string, secret: string): ReturnType<typeof parseEncryptionConfig> {
  const doc = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: keyName, secret }] } }] }] };
  return parseEncryptionConfig(JSON.stringify(doc), 'test');
}

describe('encrypting store', () => {
  it('encrypts values under the configured prefixes on the way in and decrypts them on every way out', async (t) => {
    const raw = createTempSqliteStore();
    t.after(() => raw.close());
    const store = createEncryptingStore(raw, new Map([['/registry/secrets/', rules('k1', randomBytes(32).toString('base64'))[0]!.transformer]]));
    const key = '/registry/secrets/ns/s';
    const r1 = await store.create(key, enc('v1'));
    const r2 = await store.update(key, enc('v2'), r1);
    await store.create('/registry/configmaps/ns/c', enc('plain'));
    assert.ok(dec((await raw.get(key))!.value)!.startsWith('k8s:enc:aesgcm:v1:k1:'));
    assert.equal(dec((await raw.get('/registry/configmaps/ns/c'))!.value), 'plain', 'other resources are stored as they are');
    assert.equal(dec((await store.get(key))!.value), 'v2');
    assert.deepEqual((await store.list('/registry/secrets/')).items.map((kv) => dec(kv.value)), ['v2']);
    const deleted = await store.delete(key, r2);
    assert.equal(dec(deleted.kv.value), 'v2');
    const events = await takeEvents(store, '/registry/secrets/', 0, 3);
    assert.deepEqual(events.map(summarize), [
      `PUT+ ${key}=v1@${r1}`,
      `PUT ${key}=v2@${r2} prev=v1@${r1}`,
      `DELETE ${key}=v2@${deleted.revision} prev=v2@${r2}`,
    ]);
  });

  it('encrypts a custom resource\'s values under /registry/<group>/<plural>/ by the rule naming it, known only when first stored', async (t) => {
    const raw = createTempSqliteStore();
    t.after(() => raw.close());
    const transformer = rules('k1', randomBytes(32).toString('base64'))[0]!.transformer;
    const asked: string[] = [];
    const store = createEncryptingStore(raw, new Map(), (group, plural) => {
      asked.push(`${plural}.${group}`);
      return plural === 'widgets' ? transformer : undefined;
    });
    const key = '/registry/example.com/widgets/ns/w';
    await store.create(key, enc('{"kind":"Widget"}'));
    await store.create('/registry/example.com/gadgets/ns/g', enc('plain'));
    await store.create('/registry/configmaps/ns/c', enc('plain'));
    assert.ok(dec((await raw.get(key))!.value)!.startsWith('k8s:enc:aesgcm:v1:k1:'));
    assert.equal(dec((await raw.get('/registry/example.com/gadgets/ns/g'))!.value), 'plain', 'a custom resource no rule names');
    assert.equal(dec((await raw.get('/registry/configmaps/ns/c'))!.value), 'plain', 'a built-in resource no prefix names');
    assert.equal(dec((await store.get(key))!.value), '{"kind":"Widget"}');
    assert.deepEqual((await store.list('/registry/example.com/widgets/')).items.map((kv) => dec(kv.value)), ['{"kind":"Widget"}']);
    assert.deepEqual(asked, ['widgets.example.com', 'gadgets.example.com'], 'asked once per custom prefix');
  });

  it('a value no configured key reads is an internal error naming the storage key', async (t) => {
    const raw = createTempSqliteStore();
    t.after(() => raw.close());
    const writer = createEncryptingStore(raw, new Map([['/registry/secrets/', rules('old', randomBytes(32).toString('base64'))[0]!.transformer]]));
    await writer.create('/registry/secrets/ns/s', enc('v'));
    const reader = createEncryptingStore(raw, new Map([['/registry/secrets/', rules('new', randomBytes(32).toString('base64'))[0]!.transformer]]));
    await assert.rejects(reader.get('/registry/secrets/ns/s'), (err: Error) => {
      assert.equal(errCode(err), 'ERR_INTERNAL');
      assert.equal(err.message, 'unable to transform key "/registry/secrets/ns/s": no matching key was found for the provided AES transformer');
      return true;
    });
    await assert.rejects(reader.list('/registry/secrets/'), /unable to transform key/);
  });
});
