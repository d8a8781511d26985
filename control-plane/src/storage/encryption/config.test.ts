import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hasCode, type Logger } from '@nodelet/base';
import { customTransformer, loadEncryptionConfig, parseEncryptionConfig, transformersByPrefix } from './config.js';

const KEY32 = Buffer.alloc(32, 7).toString('base64');
const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n';
const one = (providers: string): string => `${HEAD}resources:\n  - resources: [secrets]\n    providers:\n${providers}`;

function refused(text: string, message: RegExp): void {
  assert.throws(() => parseEncryptionConfig(text, '/etc/enc.yaml'), (err: Error) => {
    assert.ok(hasCode(err, 'ERR_INVALID_ARGUMENT'));
    assert.match(err.message, /^--encryption-provider-config: error while parsing encryption provider configuration file "\/etc\/enc.yaml": /);
    assert.match(err.message, message);
    return true;
  });
}

const STORED = [
  { group: '', plural: 'secrets', prefix: '/registry/secrets/' },
  { group: '', plural: 'configmaps', prefix: '/registry/configmaps/' },
  { group: 'apps', plural: 'deployments', prefix: '/registry/deployments/' },
  { group: '', plural: 'events', prefix: '/registry/events/' },
  { group: 'events.k8s.io', plural: 'events', prefix: '/registry/events/' },
];

describe('EncryptionConfiguration', () => {
  it('parses the documented YAML with several providers and keys', () => {
    const rules = parseEncryptionConfig(one(`      - aesgcm:\n          keys:\n            - name: key2\n              secret: ${Buffer.alloc(16, 1).toString('base64')}\n            - name: key1\n              secret: ${KEY32}\n      - identity: {}\n`), 'x');
    assert.equal(rules.length, 1);
    assert.deepEqual(rules[0]!.resources, ['secrets']);
    assert.deepEqual(rules[0]!.providers, ['aesgcm', 'identity']);
  });

  it('refuses keys of the wrong length or encoding with upstream\'s field errors', () => {
    refused(one(`      - aescbc:\n          keys:\n            - name: k\n              secret: cGFzc3dvcmQ=\n`),
      /resources\[0\]\.providers\[0\]\.aescbc\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of \[16 24 32\]/);
    refused(one(`      - secretbox:\n          keys:\n            - name: k\n              secret: ${Buffer.alloc(16).toString('base64')}\n`),
      /secretbox\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of \[32\]/);
    refused(one(`      - aesgcm:\n          keys:\n            - name: k\n              secret: "not base64!"\n`), /secrets must be base64 encoded/);
    refused(one(`      - aesgcm:\n          keys:\n            - secret: ${KEY32}\n`), /keys\[0\]\.name: Required value: name is a mandatory field for a key/);
    refused(one(`      - aesgcm:\n          keys: []\n`), /aesgcm\.keys: Required value: at least one keys is required/);
  });

  it('refuses kms as not supported here, and providers it does not know or mixes', () => {
    refused(one(`      - kms:\n          name: vault\n          endpoint: unix:///kms.sock\n`), /providers\[0\]\.kms: Unsupported value: the kms provider is not supported here/);
    refused(one(`      - aesctr: {}\n`), /provider does not contain any of the expected providers/);
    refused(one(`      - identity: {}\n        aescbc:\n          keys: [{name: k, secret: ${KEY32}}]\n`), /more than one provider specified in a single element/);
  });

  it('refuses other documents, unknown fields and malformed resource names', () => {
    refused('apiVersion: v1\nkind: Config\n', /got unexpected config type/);
    refused(`${HEAD}resources: []\n`, /resources: Required value/);
    refused(`${HEAD}resources:\n  - resources: [secrets]\n    providers: [{identity: {}}]\n    extra: 1\n`, /resources\[0\]\.extra: Unsupported value: unknown field/);
    refused(`${HEAD}resources:\n  - resources: ["*"]\n    providers: [{identity: {}}]\n`, /use "\*\.\*" for every resource/);
    refused(`${HEAD}resources:\n  - resources: [Secrets]\n    providers: [{identity: {}}]\n`, /lower case/);
    refused(`${HEAD}resources:\n  - resources: [secrets, secrets]\n    providers: [{identity: {}}]\n`, /Duplicate value: "secrets"/);
  });

  it('maps resource names and wildcards to the storage prefixes of the served resources', () => {
    const rules = parseEncryptionConfig(`${HEAD}resources:\n  - resources: [secrets]\n    providers: [{aescbc: {keys: [{name: k, secret: ${KEY32}}]}}]\n  - resources: ["*."]\n    providers: [{identity: {}}]\n  - resources: ["*.*"]\n    providers: [{secretbox: {keys: [{name: b, secret: ${KEY32}}]}}]\n`, 'x');
    const byPrefix = transformersByPrefix(rules, STORED, 'x');
    assert.deepEqual([...byPrefix.keys()].sort(), ['/registry/configmaps/', '/registry/deployments/', '/registry/events/', '/registry/secrets/']);
    // The first rule naming a resource wins: secrets by aescbc, other core resources by identity, apps by secretbox.
    assert.equal(byPrefix.get('/registry/secrets/'), rules[0]!.transformer);
    assert.equal(byPrefix.get('/registry/configmaps/'), rules[1]!.transformer);
    assert.equal(byPrefix.get('/registry/deployments/'), rules[2]!.transformer);
    const named = (resource: string) => parseEncryptionConfig(one('      - identity: {}\n').replace('[secrets]', `[${JSON.stringify(resource)}]`), 'x');
    // Names no built-in resource: refused unless it may name custom resources (a dotted group no built-in one has).
    for (const typo of ['secret', 'widgets.apps', 'widgets.events.k8s.io']) assert.throws(() => transformersByPrefix(named(typo), STORED, 'x'), new RegExp(`"${typo.replace(/\./g, '\\.')}" is not one this server stores`));
    for (const custom of ['widgets.example.com', '*.example.com']) assert.equal(transformersByPrefix(named(custom), STORED, 'x').size, 0);
  });

  it('covers custom resources by *.*, *.<group> and <plural>.<group>, the first rule naming them winning', () => {
    const rules = parseEncryptionConfig(
      `${HEAD}resources:\n  - resources: [widgets.example.com]\n    providers: [{aescbc: {keys: [{name: k, secret: ${KEY32}}]}}]\n  - resources: ["*.example.com"]\n    providers: [{identity: {}}]\n  - resources: ["*.*"]\n    providers: [{secretbox: {keys: [{name: b, secret: ${KEY32}}]}}]\n`,
      'x',
    );
    const of = customTransformer(rules);
    assert.equal(of('example.com', 'widgets'), rules[0]!.transformer);
    assert.equal(of('example.com', 'gadgets'), rules[1]!.transformer);
    assert.equal(of('other.io', 'widgets'), rules[2]!.transformer);
    assert.equal(customTransformer(parseEncryptionConfig(one('      - identity: {}\n'), 'x'))('example.com', 'widgets'), undefined, 'a config naming only secrets leaves them as they are');
  });

  it('loads a file, warning when group or others may read the keys', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-enc-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'enc.yaml');
    await writeFile(file, one('      - identity: {}\n'), { mode: 0o600 });
    const warnings: unknown[] = [];
    const log = { warn: (o: unknown) => warnings.push(o), info: () => {}, error: () => {}, debug: () => {}, child: () => log } as unknown as Logger;
    await loadEncryptionConfig(file, log);
    assert.equal(warnings.length, 0);
    await chmod(file, 0o644);
    await loadEncryptionConfig(file, log);
    assert.equal(warnings.length, 1);
    await writeFile(file, '');
    await assert.rejects(loadEncryptionConfig(file), /is empty/);
    await assert.rejects(loadEncryptionConfig(join(dir, 'missing.yaml')), /error opening encryption provider configuration file/);
  });
});
