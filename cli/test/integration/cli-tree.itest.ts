// The real `nodelet` binary (bin/nodelet-dev): the commands bin/nodelet hands to other packages
// (server, etcd, agent, proxy, hollow) print help whose usage line names `nodelet <command>`;
// `nodelet completion bash` loads in bash; `nodelet node info` and `nodelet doctor` read this
// machine's inventory through systeminformation, and doctor ends with its summary line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routedCommands } from '../../src/testing/routed.js';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function nodelet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODELET, args, { cwd: ROOT, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('nodelet <routed command> --help: the usage line is "Usage: nodelet <command>" (was "Usage: hollow")', async () => {
  const routed = routedCommands();
  const top = await nodelet(['--help']);
  for (const name of routed) {
    assert.match(top.stdout, new RegExp(`^  ${name} `, 'm'), `nodelet --help lists ${name}`);
    const r = await nodelet([name, '--help']);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.match(r.stdout.split('\n')[0]!, new RegExp(`^Usage: nodelet ${name}( |$)`), `${name}: ${r.stdout.split('\n')[0]}`);
  }
});

test('nodelet completion bash: the printed script completes in bash', async () => {
  const r = await nodelet(['completion', 'bash']);
  assert.equal(r.code, 0, r.stderr);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-completion-'));
  try {
    await writeFile(join(dir, 'c.bash'), r.stdout);
    const out = await new Promise<string>((resolve, reject) =>
      execFile('bash', ['--norc', '-c', `source ${dir}/c.bash; COMP_WORDS=(nodelet cri ru); COMP_CWORD=2; _nodelet; echo "\${COMPREPLY[*]}"`], (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    assert.equal(out.trim().split(' ').sort().join(' '), 'run runp');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const bad = await nodelet(['completion', 'fish']);
  assert.deepEqual([bad.code, bad.stderr], [1, 'nodelet: unsupported shell "fish": use bash or zsh\n']);
});

test('nodelet node info reads this machine; nodelet doctor prints it and ends with the summary', async () => {
  const r = await nodelet(['node', 'info', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const inv = JSON.parse(r.stdout) as { os: { platform: string }; cpu: { cores: number }; memory: { totalBytes: number }; network: Array<{ name: string }>; disks: unknown[] };
  assert.equal(inv.os.platform, 'linux');
  assert.ok(inv.cpu.cores >= 1 && inv.memory.totalBytes > 0);
  assert.ok(inv.network.some((n) => n.name === 'lo'), 'the loopback interface is listed');
  const text = await nodelet(['node', 'info']);
  assert.match(text.stdout, /^os: {7}.*\ncpu: {6}.* cores.*\nmemory: {3}.* total, .* available, swap .*\nvirtual: {2}.*\n/);

  // Nothing to check against here (no runtime on this endpoint): failures are expected; what is
  // checked is the inventory first and the summary line last, matching the result lines.
  const d = await nodelet(['doctor', '--container-runtime-endpoint', 'unix:///nonexistent/cri.sock', '--cni-conf-dir', '/nonexistent', '--kubeconfig', '/nonexistent']);
  assert.equal(d.code, 2, d.stderr);
  const lines = d.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^os: {7}/);
  const count = (tag: string): number => lines.filter((l) => l.startsWith(tag)).length;
  assert.equal(lines.at(-1), `${count('[pass]')} passed, ${count('[warn]')} ${count('[warn]') === 1 ? 'warning' : 'warnings'}, ${count('[FAIL]')} failed${count('[skip]') ? `, ${count('[skip]')} skipped` : ''}`);
  assert.ok(count('[FAIL]') > 0);

  const args = ['doctor', '--container-runtime-endpoint', 'unix:///nonexistent/cri.sock', '--cni-conf-dir', '/nonexistent', '--kubeconfig', '/nonexistent'];
  const json = JSON.parse((await nodelet([...args, '-o', 'json'])).stdout) as { inventory: { os: { platform: string } }; results: Array<{ level: string }>; summary: string; exitCode: number };
  assert.equal(json.inventory.os.platform, 'linux');
  assert.equal(json.exitCode, 2);
  assert.match(json.summary, new RegExp(`^${json.results.filter((r) => r.level === 'pass').length} passed, `));
  const bare = await nodelet([...args, '--no-inventory']);
  assert.match(bare.stdout, /^\[(pass|warn|FAIL|skip)\] /, '--no-inventory starts with the checks');
  const badFormat = await nodelet(['doctor', '-o', 'yaml']);
  assert.deepEqual([badFormat.code, badFormat.stderr], [1, 'nodelet: unsupported output format "yaml": use text or json\n']);
});
