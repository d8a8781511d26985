import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, readFileSync, statSync, existsSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { installServer, installAgent, uninstall, type Systemctl } from './install.js';

/** systemctl at the process boundary: records calls, keeps enabled state like the real one. */
function fakeSystemctl(): { sc: Systemctl; calls: string[][] } {
  const calls: string[][] = [];
  const enabled = new Set<string>();
  return {
    calls,
    sc: (args) => {
      if (args[0] === 'is-enabled') return { code: enabled.has(args[2]!) ? 0 : 1, output: '' };
      calls.push(args);
      if (args[0] === 'enable') enabled.add(args[1]!);
      if (args[0] === 'disable') enabled.delete(args.at(-1)!);
      return { code: 0, output: '' };
    },
  };
}

function listFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), base) : [join(dir, e.name).slice(base.length)],
  );
}

test('install server writes units, env and wrapper, then enables and starts; a second run changes nothing', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nodelet-install-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const { sc, calls } = fakeSystemctl();
  const first = installServer({ root, systemctl: sc, port: 6443, sourceDir: '/opt/nodelet', nodeBin: '/usr/local/bin/node' });
  assert.equal(first.changed, true);
  assert.deepEqual(first.files.map((f) => f.outcome), ['created', 'created', 'created']);
  assert.deepEqual(calls, [['daemon-reload'], ['enable', 'nodelet-server.service'], ['restart', 'nodelet-server.service']]);
  const unit = readFileSync(join(root, 'etc/systemd/system/nodelet-server.service'), 'utf8');
  assert.match(unit, /^ExecStart=\/usr\/local\/bin\/nodelet server /m);
  assert.match(readFileSync(join(root, 'etc/nodelet/server.env'), 'utf8'), /--registry-root \/opt\/nodelet\/build\/images/);
  assert.equal(statSync(join(root, 'usr/local/bin/nodelet')).mode & 0o777, 0o755);
  assert.equal(statSync(join(root, 'etc/nodelet/server.env')).mode & 0o777, 0o600);
  assert.match(readFileSync(join(root, 'etc/nodelet/server.env'), 'utf8'), /^NODELET_SERVER_ARGS=--registry-root \S+ --port 6443$/m);

  calls.length = 0;
  const second = installServer({ root, systemctl: sc, port: 6443, sourceDir: '/opt/nodelet', nodeBin: '/usr/local/bin/node' });
  assert.equal(second.changed, false);
  assert.ok(second.files.every((f) => f.outcome === 'unchanged'));
  assert.deepEqual(calls, [['enable', 'nodelet-server.service'], ['start', 'nodelet-server.service']]);
});

test('uninstall removes exactly what was installed; a file the operator edited is kept; --purge removes state', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'nodelet-install-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const { sc, calls } = fakeSystemctl();
  const before = new Set(listFiles(root));
  installServer({ root, systemctl: sc, sourceDir: '/opt/nodelet' });
  installAgent({ root, systemctl: sc, sourceDir: '/opt/nodelet', containerdConfig: 'version = 2\n', nodeName: 'n1' });
  assert.ok(existsSync(join(root, 'etc/systemd/system/containerd.service.d/10-nodelet.conf')));
  // What the agent writes at run time is adopted by the manifest and removed by uninstall.
  mkdirSync(join(root, 'opt/cni/bin'), { recursive: true });
  mkdirSync(join(root, 'etc/cni/net.d'), { recursive: true });
  writeFileSync(join(root, 'opt/cni/bin/nodelet-cni'), 'shim');
  writeFileSync(join(root, 'etc/cni/net.d/10-nodelet.conflist'), '{}');
  writeFileSync(join(root, 'etc/nodelet/agent.yaml'), 'edited: true\n');
  writeFileSync(join(root, 'etc/operator-notes'), 'mine');

  calls.length = 0;
  const res = uninstall({ root, systemctl: sc });
  assert.deepEqual(res.keptModified, ['/etc/nodelet/agent.yaml']);
  // containerd was enabled by us (it was not before), so uninstall disables it again.
  assert.deepEqual(calls, [
    ['disable', '--now', 'nodelet-agent.service'], ['disable', '--now', 'nodelet-server.service'], ['daemon-reload'],
    ['disable', '--now', 'containerd.service'],
  ]);
  // The manifest stays while it still lists the kept file, so a later uninstall can finish the job.
  assert.deepEqual(
    new Set(listFiles(root)),
    new Set([...before, '/etc/nodelet/agent.yaml', '/etc/operator-notes', '/var/lib/nodelet/install-manifest.json']),
  );

  uninstall({ root, systemctl: sc, purge: true });
  assert.deepEqual(listFiles(root), ['/etc/operator-notes']);
});
