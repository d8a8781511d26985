import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { familiarReference, formatReference, normalizeReference, parseImageReference, validateRepositoryName, validateTag } from './reference.js';

const D = 'sha256:' + 'a'.repeat(64);

test('normalises references like docker does', () => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['library/busybox', 'docker.io/library/busybox:latest'],
    ['docker.io/busybox', 'docker.io/library/busybox:latest'],
    ['index.docker.io/busybox', 'docker.io/library/busybox:latest'],
    ['user/app', 'docker.io/user/app:latest'],
    ['user/team/app:v1', 'docker.io/user/team/app:v1'],
    ['localhost/app', 'localhost/app:latest'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['127.0.0.1:5000/pause:3.9', '127.0.0.1:5000/pause:3.9'],
    ['registry.k8s.io/pause:3.6', 'registry.k8s.io/pause:3.6'],
    ['[::1]:5000/app', '[::1]:5000/app:latest'],
    ['Registry.Example/app', 'Registry.Example/app:latest'],
    [`busybox@${D}`, `docker.io/library/busybox@${D}`],
    [`busybox:1.36@${D}`, `docker.io/library/busybox:1.36@${D}`],
    ['my-reg.example.com/e_f.g--h/a__b:T_a.g-1', 'my-reg.example.com/e_f.g--h/a__b:T_a.g-1'],
  ];
  for (const [input, want] of cases) assert.equal(normalizeReference(input), want, input);
});

test('splits domain, path, tag and digest', () => {
  assert.deepEqual(parseImageReference('127.0.0.1:41234/lab/tools:v2'), { domain: '127.0.0.1:41234', path: 'lab/tools', tag: 'v2' });
  assert.deepEqual(parseImageReference(`x@${D}`), { domain: 'docker.io', path: 'library/x', digest: D });
});

test('familiar form drops docker.io and library/', () => {
  const cases: [string, string][] = [
    ['busybox', 'busybox:latest'],
    ['user/app:v1', 'user/app:v1'],
    ['127.0.0.1:5000/pause:3.9', '127.0.0.1:5000/pause:3.9'],
    ['docker.io/library/a/b', 'library/a/b:latest'],
  ];
  for (const [input, want] of cases) assert.equal(familiarReference(parseImageReference(input)), want, input);
  assert.equal(formatReference(parseImageReference('busybox')), 'docker.io/library/busybox:latest');
});

test('rejects invalid references naming the offending part', () => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    [' busybox', /white space/],
    ['Busybox', /path component "Busybox" must be lower-case/],
    ['user/App', /path component "App" must be lower-case/],
    ['busybox:', /tag after ":" is empty/],
    ['busybox:-x', /tag "-x"/],
    ['busybox:' + 'a'.repeat(129), /tag "a+"/],
    ['busybox:a b', /tag "a b"/],
    ['a//b', /empty path component/],
    ['a/', /empty path component/],
    ['a..b', /path component "a..b"/],
    ['a_-b', /path component "a_-b"/],
    ['-a', /path component "-a"/],
    ['localhost:5000/', /repository path after the registry host is empty/],
    ['localhost:99999/app', /port "99999"/],
    ['localhost:p0rt/app', /port "p0rt"/],
    ['exa_mple.com/app', /registry host "exa_mple.com" has an invalid component "exa_mple"/],
    ['-bad.com/app', /invalid component "-bad"/],
    ['busybox@sha256:abc', /64 lower-case hex digits/],
    ['busybox@sha256:' + 'A'.repeat(64), /64 lower-case hex digits/],
    ['busybox@md5:' + 'a'.repeat(32), /algorithm "md5" is not supported/],
    ['busybox@nocolon', /must look like "sha256:/],
    [':tag', /repository name is empty/],
    ['a/' + 'b'.repeat(300), /longer than 255/],
  ];
  for (const [input, want] of cases) {
    assert.throws(
      () => parseImageReference(input),
      (err: Error) => {
        assert.ok(hasCode(err, 'ERR_INVALID_ARGUMENT'), `${input}: code`);
        assert.match(err.message, want, `${JSON.stringify(input)}`);
        assert.ok(err.message.startsWith(`invalid image reference "${input}"`), err.message);
        return true;
      },
    );
  }
});

test('validates registry repository names and tags', () => {
  assert.equal(validateRepositoryName('lab/tools'), 'lab/tools');
  assert.throws(() => validateRepositoryName('Lab'), /invalid repository name "Lab": repository path component "Lab" must be lower-case/);
  assert.equal(validateTag('3.9'), '3.9');
  assert.throws(() => validateTag('.x'), /invalid tag "\.x"/);
});
