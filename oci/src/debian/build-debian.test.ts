import assert from 'node:assert/strict';
import { chmod, chown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { runTool } from '../exec.js';
import { debFileName, readDebOwners, resolvePackages, validatePackageName } from './apt.js';
import { buildDebianImage } from './build-debian.js';

test('resolvePackages: the closure for an empty system, in install order, with versions and architectures', async () => {
  const pkgs = await resolvePackages(['nginx']);
  const names = pkgs.map((p) => p.name);
  assert.ok(names.includes('nginx') && names.includes('nginx-common') && names.includes('libc6'), names.join(' '));
  assert.ok(names.indexOf('libc6') < names.indexOf('nginx'), 'dependencies first');
  assert.equal(pkgs.find((p) => p.name === 'nginx-common')?.arch, 'all');
  await assert.rejects(resolvePackages(['no-such-package-nodelet']), /"no-such-package-nodelet" is not in this machine's package lists/);
});

test('package names are checked before they reach apt; .deb names escape the epoch colon as apt does', () => {
  assert.throws(() => validatePackageName('-o=Dir::Etc=/tmp'), /not a Debian package name/);
  assert.throws(() => validatePackageName('Nginx'), /not a Debian package name/);
  assert.equal(validatePackageName('libstdc++6'), 'libstdc++6');
  assert.equal(debFileName({ name: 'busybox', version: '1:1.35.0-4', arch: 'amd64' }), 'busybox_1%3a1.35.0-4_amd64.deb');
});

test('buildDebianImage: a package without a known entrypoint asks for --entrypoint before any apt work; an unknown package is named', async () => {
  await assert.rejects(
    buildDebianImage({ store: '/nonexistent', name: 'x', tag: 'latest', packages: ['coreutils', 'curl'], cacheDir: '/nonexistent' }),
    (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /no known entrypoint for Debian packages "coreutils", "curl" \(nodelet knows nginx, redis-server, python3, postgresql\): give the command to run with --entrypoint or --cmd/.test(err.message),
  );
  await assert.rejects(
    buildDebianImage({ store: '/nonexistent', name: 'x', tag: 'latest', packages: ['curl', 'no-such-package-nodelet'], cacheDir: '/nonexistent', config: { entrypoint: ['curl'] } }),
    (err: Error) => hasCode(err, 'ERR_NOT_FOUND') && /Debian package "no-such-package-nodelet" is not in this machine's package lists/.test(err.message),
  );
});

test('readDebOwners: entries a .deb gives to someone other than root, or with setuid/setgid/sticky bits, from its own tar headers', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-deb-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pkg = join(dir, 'pkg');
  await mkdir(join(pkg, 'DEBIAN'), { recursive: true });
  await mkdir(join(pkg, 'usr/bin'), { recursive: true });
  await mkdir(join(pkg, 'var/local'), { recursive: true });
  await writeFile(join(pkg, 'DEBIAN/control'), 'Package: nodelet-owners-test\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: t\n');
  for (const [f, mode, gid] of [['usr/bin/su', 0o4755, 0], ['usr/bin/chage', 0o2755, 42], ['usr/bin/plain', 0o755, 0]] as const) {
    await writeFile(join(pkg, f), '#!/bin/sh\n');
    await chown(join(pkg, f), 0, gid);
    await chmod(join(pkg, f), mode);
  }
  await chown(join(pkg, 'var/local'), 0, 50);
  await chmod(join(pkg, 'var/local'), 0o2775);
  await symlink('plain', join(pkg, 'usr/bin/link'));
  const deb = join(dir, 'x.deb');
  await runTool('dpkg-deb', ['--build', pkg, deb]);
  const owners = await readDebOwners(deb);
  assert.deepEqual(owners.sort((a, b) => a.path.localeCompare(b.path)), [
    { path: '/usr/bin/chage', uid: 0, gid: 42, mode: 0o2755 },
    { path: '/usr/bin/su', uid: 0, gid: 0, mode: 0o4755 },
    { path: '/var/local', uid: 0, gid: 50, mode: 0o2775 },
  ]);
  await assert.rejects(readDebOwners(join(dir, 'missing.deb')), /dpkg-deb --fsys-tarfile .* exited with/);
});
