// `nodelet image build|ls|serve|import|export|inspect|rm` as separate processes: build twice (same
// digest), list, serve and pull over HTTP; import an archive, inspect, export, re-import, remove.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ociArchiveFiles, whiteoutImage, writeTarArchive } from '@nodelet/oci/testing';
import { cleanups } from '@nodelet/base/testing';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));

function nodelet(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(NODELET, args, { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('image build is reproducible, ls lists it, serve serves it read-only', { timeout: 60_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-image-cli-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
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
  assert.match(ls.stdout, /^REPOSITORY\s+TAG\s+DIGEST\s+SIZE\nlab\/web\s+v1\s+[a-f0-9]{13}\s+\d+(\.\d+)?kB\n$/);
  assert.equal(nodelet('image', 'ls', '--store', store, '-q').stdout, 'lab/web:v1\n');

  const bad = nodelet('image', 'build', 'Lab/Web', '--store', store);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^nodelet: invalid repository name "Lab\/Web": repository path component "Lab" must be lower-case\n$/);

  const serve = spawn(NODELET, ['image', 'serve', '--store', store, '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup(() => void serve.kill('SIGKILL'));
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
  assert.match(remote.stdout, new RegExp(`^REPOSITORY\\s+TAG\\s+DIGEST\\s+SIZE\\nlab/web\\s+v1\\s+${digest.slice(7, 20)}\\s`));
  const put = await fetch(`${url}/v2/lab/web/manifests/v2`, { method: 'PUT', body: '{}' });
  assert.equal(put.status, 405);
  await put.body?.cancel();

  const exited = new Promise<number | null>((resolve) => serve.once('exit', (code) => resolve(code)));
  serve.kill('SIGTERM');
  assert.equal(await exited, 0, 'serve exits cleanly on SIGTERM');
});

test('image import prints pull references; inspect, export, re-import and rm work on the store', { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-image-archive-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const img = await whiteoutImage();
  const archive = join(dir, 'in.tar');
  await writeTarArchive(archive, ociArchiveFiles([{ image: img, names: ['docker.io/library/wh:v1', 'ghcr.io/acme/wh:v2'] }]));
  const store = join(dir, 'store');

  const imp = nodelet('image', 'import', archive, '--store', store, '--registry', '127.0.0.1:5999');
  assert.equal(imp.code, 0, imp.stderr);
  assert.equal(imp.stdout, `imported wh:v1 ${img.manifestDigest}, pull it as 127.0.0.1:5999/wh:v1\nimported acme/wh:v2 ${img.manifestDigest}, pull it as 127.0.0.1:5999/acme/wh:v2\n`);
  assert.match(nodelet('image', 'ls', '--store', store).stdout, /^REPOSITORY\s+TAG\s+DIGEST\s+SIZE\nacme\/wh\s+v2\s+[a-f0-9]{13}\s+\S+\nwh\s+v1\s/);

  const inspect = nodelet('image', 'inspect', 'docker.io/library/wh:v1', '--store', store);
  assert.equal(inspect.code, 0, inspect.stderr);
  const [doc] = JSON.parse(inspect.stdout) as { name: string; digest: string; manifest: { layers: unknown[] }; config: { rootfs: { diff_ids: string[] } } }[];
  assert.equal(doc!.digest, img.manifestDigest);
  assert.equal(doc!.manifest.layers.length, 3);
  assert.deepEqual(doc!.config.rootfs.diff_ids, img.layers.map((l) => l.diffId));

  const out = join(dir, 'out.tar');
  const exp = nodelet('image', 'export', 'wh:v1', '-o', out, '--format', 'docker', '--store', store);
  assert.equal(exp.code, 0, exp.stderr);
  const again = nodelet('image', 'import', out, '--store', join(dir, 'store2'), '-t', 'copy:1');
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^imported copy:1 ${img.manifestDigest}, pull it as 127\\.0\\.0\\.1:5000/copy:1\n$`));

  const rmOne = nodelet('image', 'rm', 'wh:v1', '--store', store);
  assert.equal(rmOne.stdout, 'Untagged: wh:v1\n', 'acme/wh:v2 still uses every blob');
  const rmAll = nodelet('image', 'rm', 'acme/wh:v2', '--store', store);
  assert.equal(rmAll.stdout.split('\n').filter((l) => l.startsWith('Deleted: sha256:')).length, 5);

  const bad = nodelet('image', 'import', join(dir, 'missing.tar'), '--store', store);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^nodelet: image archive ".*missing\.tar" does not exist\n$/);
});

/**
 * The archive and registry formats against an implementation nobody here wrote: skopeo
 * (containers/image, Debian's `skopeo`, installed by make deps) pulls from `nodelet image serve`,
 * writes docker-archive and oci-archive files that `nodelet image import` reads, and reads both
 * formats `nodelet image export` writes. The image is the same throughout: its layers' diff IDs.
 */
test('skopeo pulls from the registry, writes archives import reads, and reads what export writes', { timeout: 120_000 }, async (t) => {
  const cleanup = cleanups(t);
  if (spawnSync('skopeo', ['--version']).status !== 0) return t.skip('skopeo not installed (apt-get install skopeo; make deps installs it)');
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-image-skopeo-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'tool'), '#!/bin/sh\necho tool\n');
  const store = join(dir, 'store');
  const built = nodelet('image', 'build', 'lab/peer:v1', '--store', store, '-f', `${join(dir, 'tool')}:/usr/bin/tool:0755`, '--cmd', 'tool');
  assert.equal(built.code, 0, built.stderr);
  const digest = built.stdout.trim().split(' ')[1]!;
  const diffIds = (s: string, name: string): string[] => {
    const r = nodelet('image', 'inspect', name, '--store', s);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { config: { rootfs: { diff_ids: string[] } } }[])[0]!.config.rootfs.diff_ids;
  };
  const want = diffIds(store, 'lab/peer:v1');
  const skopeo = async (...args: string[]): Promise<string> => {
    // Asynchronous: the registry under test may be served by a child of this process.
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const c = spawn('skopeo', ['--insecure-policy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      c.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      c.once('close', (code) => resolve({ code, out, err }));
    });
    assert.equal(r.code, 0, `skopeo ${args.join(' ')}: ${r.err}`);
    return r.out;
  };

  const serve = spawn(NODELET, ['image', 'serve', '--store', store, '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup(() => void serve.kill('SIGKILL'));
  const host = await new Promise<string>((resolve, reject) => {
    let text = '';
    serve.stdout.setEncoding('utf8').on('data', (s: string) => {
      text += s;
      const m = /at http:\/\/(127\.0\.0\.1:\d+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    serve.once('exit', (code) => reject(new Error(`serve exited ${code} before listening`)));
  });
  const remote = JSON.parse(await skopeo('inspect', '--tls-verify=false', `docker://${host}/lab/peer:v1`)) as { Digest: string; Layers: string[] };
  assert.equal(remote.Digest, digest, 'skopeo sees the manifest digest the build printed');
  assert.equal(remote.Layers.length, want.length);

  for (const format of ['docker-archive', 'oci-archive'] as const) {
    const archive = join(dir, `${format}.tar`);
    await skopeo('copy', '--src-tls-verify=false', `docker://${host}/lab/peer:v1`, `${format}:${archive}:lab/peer:v1`);
    const into = join(dir, `store-${format}`);
    const imp = nodelet('image', 'import', archive, '--store', into, '-t', 'lab/peer:v1');
    assert.equal(imp.code, 0, `${format}: ${imp.stderr}`);
    assert.deepEqual(diffIds(into, 'lab/peer:v1'), want, `${format} written by skopeo, imported by nodelet`);
  }

  for (const [format, transport] of [['docker', 'docker-archive'], ['oci', 'oci-archive']] as const) {
    const out = join(dir, `export-${format}.tar`);
    const exp = nodelet('image', 'export', 'lab/peer:v1', '-o', out, '--format', format, '--store', store);
    assert.equal(exp.code, 0, exp.stderr);
    // An OCI export names the image as containerd's does: the tag in org.opencontainers.image.ref.name.
    const read = JSON.parse(await skopeo('inspect', '--raw', '--config', `${transport}:${out}${format === 'oci' ? ':v1' : ''}`)) as { rootfs: { diff_ids: string[] } };
    assert.deepEqual(read.rootfs.diff_ids, want, `nodelet image export --format ${format}, read by skopeo`);
  }
  serve.kill('SIGTERM');
});

test('image build --from debian:RELEASE --packages a,b: one image from several packages with the given entrypoint; clear errors for a wrong base, an unknown package, no entrypoint', { timeout: 300_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-image-cli-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const store = join(dir, 'store');
  const codename = /^VERSION_CODENAME=(\S+)$/m.exec(spawnSync('cat', ['/etc/os-release'], { encoding: 'utf8' }).stdout)?.[1];
  if (!codename) return t.skip('not a Debian machine');
  const build = (...a: string[]): { code: number; stdout: string; stderr: string } => {
    const r = spawnSync(NODELET, ['image', 'build', '--store', store, ...a], { encoding: 'utf8', timeout: 280_000 });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const errors: [string[], RegExp][] = [
    [['--from', 'debian:hamm', '--packages', 'hello'], new RegExp(`^nodelet: --from "debian:hamm": this machine's apt serves debian:${codename} \\(Debian \\d+\\) only; build on such a machine, or use --from debian:${codename}\\n$`)],
    [['--from', 'alpine:3', '--packages', 'hello'], /^nodelet: --from "alpine:3": want debian:<release>/],
    [['--from', `debian:${codename}`], /^nodelet: --from needs the packages to install: --packages a,b,c\n$/],
    [['--from', `debian:${codename}`, '--packages', 'hello,sed'], /^nodelet: no known entrypoint for Debian packages "hello", "sed" \(nodelet knows nginx, redis-server, python3, postgresql\): give the command to run with --entrypoint or --cmd\n$/],
    [['--from', `debian:${codename}`, '--packages', 'hello,no-such-package-nodelet', '--cmd', 'hello'], /(^|\n)nodelet: Debian package "no-such-package-nodelet" is not in this machine's package lists/],
    [['--from', `debian:${codename}`, '--packages', 'hello', '-d', `${dir}:/x`], /^nodelet: --from builds the image from Debian packages alone: drop --dir\n$/],
    [['--packages', 'hello'], /^nodelet: --packages goes with --from debian:RELEASE or --debian PACKAGE\n$/],
  ];
  // The build's progress lines come before an error found after it started (apt's resolution).
  for (const [args, want] of errors) {
    const r = build(...args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, want, args.join(' '));
  }

  const ok = build('greet:v1', '--from', `debian:${codename}`, '--packages', 'hello,sed', '--entrypoint', 'hello', '--cmd', '-g hi', '-e', 'LANG=C.UTF-8');
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^greet:v1 sha256:[0-9a-f]{64} \(\d+ Debian packages\)\n$/);
  const [img] = JSON.parse(spawnSync(NODELET, ['image', 'inspect', '--store', store, 'greet:v1'], { encoding: 'utf8' }).stdout) as { config: { config: Record<string, unknown> } }[];
  assert.deepEqual(img!.config.config.Entrypoint, ['hello']);
  assert.deepEqual(img!.config.config.Cmd, ['-g', 'hi']);
  assert.ok((img!.config.config.Env as string[]).includes('LANG=C.UTF-8'));
  assert.match(String((img!.config.config.Labels as Record<string, string>)['org.nodelet.debian.packages']), /^hello=\S+,sed=\S+$/);
});
