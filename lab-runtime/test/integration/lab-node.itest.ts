// labRuntimeUp/Down/Status in-process: concurrent `up`s start one containerd; `down` stops and cleans it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { findProcesses, labRuntimeDown, labRuntimeStatus, labRuntimeUp, mountsUnder } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';

test('concurrent up starts exactly one containerd; status and down follow it', { timeout: 60_000 }, async (t) => {
  if (!requireRoot(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-labnode-'));
  t.after(async () => {
    await labRuntimeDown({ dir });
    await rm(dir, { recursive: true, force: true });
  });
  // A registry off 127.0.0.1:5000, as a lab on a node network has it (nothing pulls here).
  const opts = { dir, registry: '127.0.0.2:5999', cniBinDir: '/usr/lib/cni', cniConfDir: join(dir, 'net.d'), signal: AbortSignal.timeout(45_000) };

  const ups = await Promise.all([labRuntimeUp(opts), labRuntimeUp(opts), labRuntimeUp(opts)]);
  assert.equal(new Set(ups.map((u) => u.pid)).size, 1, 'one pid');
  assert.equal(ups.filter((u) => !u.alreadyRunning).length, 1, 'one start, the others reuse it');
  const procs = await findProcesses((argv) => argv.includes(join(dir, 'config.toml')));
  assert.deepEqual(procs.map((p) => p.pid), [ups[0]!.pid]);
  assert.equal(existsSync(join(dir, 'up.lock')), false, 'lock released');
  // Manifests naming 127.0.0.1:5000/… still pull: that name is sent to the registry where it is.
  const alias = readFileSync(join(dir, 'certs.d', '127.0.0.1:5000', 'hosts.toml'), 'utf8');
  assert.match(alias, /\[host\."http:\/\/127\.0\.0\.2:5999"\]/);

  const st = await labRuntimeStatus({ dir });
  assert.deepEqual([st.running, st.criReady, st.pid, st.version?.runtimeName], [true, true, ups[0]!.pid, 'containerd']);

  const down = await labRuntimeDown({ dir });
  assert.deepEqual(down, { wasRunning: true, pid: ups[0]!.pid, problems: [] });
  assert.deepEqual(await findProcesses((argv) => argv.includes(join(dir, 'config.toml'))), []);
  assert.deepEqual(await mountsUnder(dir), []);
  assert.deepEqual(await labRuntimeStatus({ dir }).then((s) => [s.running, s.criReady]), [false, false]);
  assert.deepEqual(await labRuntimeDown({ dir }), { wasRunning: false, problems: [] }, 'down is idempotent');
});
