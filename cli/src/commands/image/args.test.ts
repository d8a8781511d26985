import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBytes, parseDirSpec, parseFileSpec, parseImageName, parseWords } from './args.js';

test('parseImageName', () => {
  assert.deepEqual(parseImageName('web'), { repository: 'web', tag: 'latest' });
  assert.deepEqual(parseImageName('lab/web:v1.2'), { repository: 'lab/web', tag: 'v1.2' });
  assert.throws(() => parseImageName('127.0.0.1:5000/web:v1'), /names a registry host \("127\.0\.0\.1:5000"\).*e\.g\. web:v1/);
  assert.throws(() => parseImageName('Web'), /path component "Web" must be lower-case/);
  assert.throws(() => parseImageName('web:-x'), /invalid tag "-x"/);
});

test('parseFileSpec and parseDirSpec', () => {
  assert.deepEqual(parseFileSpec('./app:/usr/bin/app:0755'), { from: './app', to: '/usr/bin/app', mode: 0o755 });
  assert.deepEqual(parseFileSpec('./app:/usr/bin/app'), { from: './app', to: '/usr/bin/app' });
  assert.deepEqual(parseFileSpec('a:b:/x'), { from: 'a:b', to: '/x' });
  assert.throws(() => parseFileSpec('./app'), /want SRC:\/path\/in\/image/);
  assert.throws(() => parseFileSpec('./app:relative'), /want SRC:\/path\/in\/image/);
  assert.deepEqual(parseDirSpec('./www:/var/www'), { from: './www', to: '/var/www' });
  assert.throws(() => parseDirSpec('www'), /want A:B/);
});

test('parseWords', () => {
  assert.deepEqual(parseWords('sleep 3600'), ['sleep', '3600']);
  assert.deepEqual(parseWords('["sh", "-c", "echo a b"]'), ['sh', '-c', 'echo a b']);
  assert.throws(() => parseWords('[1]'), /JSON array of strings/);
});

test('formatBytes: 4 significant digits, decimal units', () => {
  assert.equal(formatBytes(512), '512B');
  assert.equal(formatBytes(686_933), '686.9kB');
  assert.equal(formatBytes(2_131_456), '2.131MB');
  assert.equal(formatBytes(1_000_000), '1MB');
});
