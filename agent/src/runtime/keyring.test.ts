import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import { DOCKERCFG_TYPE, DOCKER_CONFIG_JSON_TYPE, DockerKeyring, podKeyring, repositoryToPull, urlsMatch, type PullSecret } from './keyring.js';

const user = (u: string) => ({ username: u, password: `${u}-pw` });
const json = (name: string, auths: Record<string, object>): PullSecret => ({ name, type: DOCKER_CONFIG_JSON_TYPE, data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })) } });
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('urlsMatch: host parts glob one by one, the port must be equal, the path is a prefix', () => {
  assert.ok(urlsMatch('*.example.com', 'reg.example.com/app'));
  assert.ok(!urlsMatch('*.example.com', 'a.reg.example.com/app'), 'a glob part matches one label');
  assert.ok(!urlsMatch('*.example.com', 'example.com/app'));
  assert.ok(urlsMatch('reg.example.com:5000', 'reg.example.com:5000/app'));
  assert.ok(!urlsMatch('reg.example.com', 'reg.example.com:5000/app'), 'no port on the credential: only the default port');
  assert.ok(!urlsMatch('reg.example.com:5000', 'reg.example.com/app'));
  assert.ok(urlsMatch('reg.example.com/team', 'reg.example.com/team/app'));
  assert.ok(!urlsMatch('reg.example.com/team', 'reg.example.com/other/app'));
  assert.ok(urlsMatch('reg-[0-9].example.com', 'reg-7.example.com/app'));
});

test('lookup: most specific path first, every match returned; scheme and /v1/ /v2/ dropped from keys', () => {
  const k = DockerKeyring.fromSecrets([
    json('a', { 'reg.example.com': { auth: b64('host:host-pw') }, 'https://reg.example.com/v2/team': user('team'), '*.example.com': user('glob') }),
    json('b', { 'reg.example.com': user('host2'), 'other.io': user('other') }),
  ]);
  assert.deepEqual(k.lookup(repositoryToPull('reg.example.com/team/app:1')).map((a) => a.username), ['team', 'host', 'host2', 'glob']);
  assert.deepEqual(k.lookup(repositoryToPull('reg.example.com/app')).map((a) => a.username), ['host', 'host2', 'glob']);
  assert.deepEqual(k.lookup(repositoryToPull('other.io/x@sha256:' + 'a'.repeat(64))), [user('other')]);
  assert.deepEqual(k.lookup(repositoryToPull('nowhere.io/x')), []);
  assert.deepEqual(k.lookup(repositoryToPull('reg.example.com/team/app'))[1], { username: 'host', password: 'host-pw' }, '`auth` is base64(user:password)');
});

test('Docker Hub images match docker.io keys, and index.docker.io as the fallback', () => {
  assert.equal(repositoryToPull('busybox'), 'docker.io/library/busybox');
  const hub = DockerKeyring.fromSecrets([json('h', { 'https://index.docker.io/v1/': user('hub') })]);
  assert.deepEqual(hub.lookup(repositoryToPull('busybox:1.36')), [user('hub')]);
  assert.deepEqual(hub.lookup(repositoryToPull('quay.io/x')), []);
  const io = DockerKeyring.fromSecrets([json('h', { 'docker.io': user('io') })]);
  assert.deepEqual(io.lookup(repositoryToPull('library/busybox')), [user('io')]);
});

test('.dockercfg secrets are read; other types and malformed auth are not silently used', () => {
  const cfg: PullSecret = { name: 'old', type: DOCKERCFG_TYPE, data: { '.dockercfg': Buffer.from(JSON.stringify({ 'reg.example.com': user('old') })) } };
  const opaque: PullSecret = { name: 'o', type: 'Opaque', data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'reg.example.com': user('opaque') } })) } };
  assert.deepEqual(DockerKeyring.fromSecrets([cfg, opaque]).lookup('reg.example.com/app'), [user('old')]);
  assert.throws(() => DockerKeyring.fromSecrets([json('bad', { 'reg.example.com': { auth: b64('nocolon') } })]), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /image pull secret "bad".*unable to parse auth field, must be formatted as base64\(username:password\)/.test((e as Error).message));
  assert.throws(() => DockerKeyring.fromSecrets([{ name: 'junk', type: DOCKER_CONFIG_JSON_TYPE, data: { '.dockerconfigjson': Buffer.from('{') } }]), /image pull secret "junk"/);
});

test('podKeyring reads the pod\'s imagePullSecrets in order and names the ones it cannot read', async () => {
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [], imagePullSecrets: [{ name: 'gone' }, { name: 'there' }] } };
  const asked: string[] = [];
  let missing: string[] = [];
  const k = await podKeyring(pod, async (ns, name) => {
    asked.push(`${ns}/${name}`);
    return name === 'there' ? json('there', { 'reg.example.com': user('u') }) : undefined;
  }, AbortSignal.timeout(5000), (names) => (missing = names));
  assert.deepEqual(asked, ['ns/gone', 'ns/there']);
  assert.deepEqual(missing, ['gone']);
  assert.deepEqual(k.lookup('reg.example.com/app'), [user('u')]);
});
