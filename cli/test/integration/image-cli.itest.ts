// `nodelet image build|ls|serve` as separate processes: build twice (same digest), list, serve and pull over HTTP.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));

function nodelet(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(NODELET, args, { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('image build is reproducible, ls lists it, serve serves it read-only', { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-image-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'www'));
  await writeFile(join(dir, 'www', 'index.html'), '<h1>nodelet</h1>\n');
  await writeFile(join(dir, 'tool'), '#!/bin/sh\necho tool\n');
  const store = join(dir, 'store');
  const build = ['image', 'build', 'lab/web:v1', '--store', store, '-f', `${join(dir, 'tool')}:/usr/bin/tool:0755`, '-d', `${join(dir, 'www')}:/var/www`, '-l', '/bin/t:/usr/bin/tool', '--cmd', 'tool'];

  const first = nodelet(...build);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^lab\/web:v1 sha256:[a-f0-9]{64}\n$/);
  const again = nodelet(...build);
  assert.equal(again.stdout, first.stdout, 'same input, same digest');
  const digest = first.stdout.trim().split(' ')[1]!;

  const ls = nodelet('image', 'ls', '--store', store);
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, /^IMAGE\s+TAG\s+DIGEST\s+SIZE\nlab\/web\s+v1\s+[a-f0-9]{13}\s+\d+(\.\d+)?kB\n$/);
  assert.equal(nodelet('image', 'ls', '--store', store, '-q').stdout, 'lab/web:v1\n');

  const bad = nodelet('image', 'build', 'Lab/Web', '--store', store);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^nodelet: invalid repository name "Lab\/Web": repository path component "Lab" must be lower-case\n$/);

  const serve = spawn(NODELET, ['image', 'serve', '--store', store, '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void serve.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    serve.stdout.setEncoding('utf8').on('data', (s: string) => {
      text += s;
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    serve.once('exit', (code) => reject(new Error(`serve exited ${code} before listening`)));
  });
  const head = await fetch(`${url}/v2/lab/web/manifests/v1`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('docker-content-digest'), digest);
  const remote = nodelet('image', 'ls', '--registry', url.replace('http://', ''));
  assert.equal(remote.code, 0, remote.stderr);
  assert.match(remote.stdout, new RegExp(`^IMAGE\\s+TAG\\s+DIGEST\\s+SIZE\\nlab/web\\s+v1\\s+${digest.slice(7, 20)}\\s`));
  const put = await fetch(`${url}/v2/lab/web/manifests/v2`, { method: 'PUT', body: '{}' });
  assert.equal(put.status, 405);
  await put.body?.cancel();

  const exited = new Promise<number | null>((resolve) => serve.once('exit', (code) => resolve(code)));
  serve.kill('SIGTERM');
  assert.equal(await exited, 0, 'serve exits cleanly on SIGTERM');
});
