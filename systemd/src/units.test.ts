import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, writeFileSync, rmSync, chmodSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverUnit, agentUnit, containerdDropIn, AGENT_NODE_OPTIONS } from './units.js';

const unitsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'units');

test('committed unit files match what `nodelet install` renders', () => {
  assert.equal(readFileSync(join(unitsDir, 'nodelet-server.service'), 'utf8'), serverUnit());
  assert.equal(readFileSync(join(unitsDir, 'nodelet-agent.service'), 'utf8'), agentUnit());
  assert.equal(readFileSync(join(unitsDir, 'containerd.service.d', '10-nodelet.conf'), 'utf8'), containerdDropIn());
});

test('agent unit keeps containers alive across restarts and reports readiness', () => {
  const u = agentUnit();
  assert.match(u, /^Type=notify$/m);
  assert.match(u, /^KillMode=process$/m);
  assert.match(u, /^Restart=always$/m);
  assert.match(u, /^WatchdogSec=30$/m);
  assert.match(u, /^Wants=.*containerd\.service/m);
});

test("the agent unit's NODE_OPTIONS are accepted by node and leave it one V8 worker thread", () => {
  const line = /^Environment="NODE_OPTIONS=(.*)"$/m.exec(agentUnit());
  assert.ok(line, 'the agent unit sets NODE_OPTIONS');
  assert.equal(line[1], AGENT_NODE_OPTIONS);
  // Threads of a node that has started: main, V8's platform workers (4 unless --v8-pool-size), and
  // node's own helpers. The unit's options must take 3 workers away (docs/performance.md).
  const threads = (nodeOptions: string): number => {
    const r = spawnSync(process.execPath, ['-e', "setTimeout(() => process.stdout.write(String(require('node:fs').readdirSync('/proc/self/task').length)), 100)"], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    return Number(r.stdout);
  };
  assert.equal(threads('') - threads(line[1]), 3);
});

test('systemd-analyze verify accepts every unit without a single warning', (t) => {
  const probe = spawnSync('systemd-analyze', ['--version']);
  if (probe.status !== 0) {
    t.skip('systemd-analyze is not installed');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-units-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // ExecStart= binaries must exist and be executable for verify; point them at stand-ins.
  const bin = join(dir, 'nodelet');
  writeFileSync(bin, '#!/bin/sh\nexit 0\n');
  chmodSync(bin, 0o755);
  const opts = { nodeletBin: bin, configDir: dir, stateDir: dir };
  const files = {
    'nodelet-server.service': serverUnit(opts),
    'nodelet-agent.service': agentUnit(opts),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const hadLoadDir = existsSync('/run/systemd/systemd-units-load');
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', ...Object.keys(files).map((f) => join(dir, f))], {
    encoding: 'utf8',
  });
  if (!hadLoadDir) rmSync('/run/systemd/systemd-units-load', { recursive: true, force: true });
  // Warnings (misspelled keys, bad values) exit 0: any output at all is a failure.
  const out = (r.stdout + r.stderr).trim();
  assert.equal(r.status, 0, out);
  assert.equal(out, '');
});
