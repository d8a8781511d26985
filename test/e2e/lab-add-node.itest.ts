// `nodelet lab add-node` / `remove-node` as docs/lab.md types them (issue 32): the first node
// holds the agent's default ports (10250/10248, as after `make up`), so an added node without port
// flags must pick free ones; an added node whose agent cannot start (its healthz port taken) fails
// at once with the agent log's last lines and leaves no state dir; `remove-node` deletes the Node
// object (it used to stay Ready for ~40 s, its pods Running). The lab itself runs on private
// API/registry ports, state dirs and bridges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { labCgroupRoot, labDown, labRemoveNode, labUp } from '@nodelet/cli';
import { parseMountinfo, relativeToMountRoot } from '@nodelet/base';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { freePort } from '@nodelet/base/testing';
import { kubectl } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The lab node's kubepods cgroup in the memory hierarchy (its pod cgroups are below it). */
function kubepodsDir(stateDir: string): string {
  const m = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  const memory = m.v1.get('memory') ?? m.v2!;
  return join(memory.mount, relativeToMountRoot(memory.root, labCgroupRoot(stateDir)), 'kubepods');
}

/** `bin/nodelet-dev <args>` (the CLI from sources): exit code, output and how long it took. */
function nodelet(args: string[]): Promise<{ code: number; out: string; ms: number }> {
  const started = Date.now();
  return new Promise((done) => {
    execFile(join(ROOT, 'bin', 'nodelet-dev'), args, { timeout: 240_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr, ms: Date.now() - started });
    });
  });
}

test('lab add-node picks free ports, fails fast and cleanly, and remove-node deletes the Node', async (t) => {
  if (!requireRoot(t)) return;
  const dir1 = mkdtempSync(join(tmpdir(), 'nodelet-e2e-add-node-1-'));
  const dir2 = join(tmpdir(), `nodelet-e2e-add-node-2-${process.pid}`);
  const dir3 = join(tmpdir(), `nodelet-e2e-add-node-3-${process.pid}`);
  const [apiPort, regPort] = await Promise.all([freePort(), freePort()]);
  const registry = `127.0.0.1:${regPort}`;
  const lab = { stateDir: dir1, apiPort, registry, clusterCidr: '10.238.0.0/16', bridge: 'nla0', nodeName: 'add-node-1', nodeApiPort: 10250, healthzPort: 10248 };
  const admin = join(dir1, 'server', 'admin.kubeconfig');
  const node = (name: string, dir: string, bridge: string) => ['--state-dir', dir, '--node-name', name, '--bridge', bridge, '--admin-kubeconfig', admin, '--registry', registry, '--cluster-cidr', lab.clusterCidr];
  t.after(async () => {
    for (const [name, dir, bridge] of [['add-node-2', dir2, 'nla1'], ['add-node-3', dir3, 'nla2']] as const) {
      if (existsSync(dir)) await labRemoveNode({ stateDir: dir, nodeName: name, bridge, adminKubeconfig: admin, registry }).catch((e: unknown) => t.diagnostic(`${name} cleanup: ${String(e)}`));
      rmSync(dir, { recursive: true, force: true });
    }
    const r = await labDown(lab);
    if (r.problems.length) t.diagnostic(`lab cleanup: ${r.problems.join('; ')}`);
    rmSync(dir1, { recursive: true, force: true });
  });
  await labUp(lab);
  const k = kubectl(admin);

  // No port flags: the node API and healthz ports are free ones, not node 1's.
  const added = await nodelet(['lab', 'add-node', ...node('add-node-2', dir2, 'nla1')]);
  assert.equal(added.code, 0, added.out);
  const ports = /node API :(\d+), healthz :(\d+)/.exec(added.out);
  assert.ok(ports, added.out);
  assert.ok(![10250, 10248].includes(Number(ports[1])) && ![10250, 10248].includes(Number(ports[2])), added.out);
  assert.match(await k('get', 'node', 'add-node-2', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'), /True/);
  // Each node's pod cgroups below a root of its own (one agent's orphan sweep never sees another's pods).
  assert.notEqual(labCgroupRoot(dir1), labCgroupRoot(dir2));
  assert.ok(existsSync(kubepodsDir(dir1)) && existsSync(kubepodsDir(dir2)), `${kubepodsDir(dir1)} and ${kubepodsDir(dir2)}`);
  // Sharing the host's network namespace, it leaves <host IP>:53 to node 1's resolver instead of failing to bind it.
  assert.doesNotMatch(readFileSync(join(dir2, 'agent.log'), 'utf8'), /EADDRINUSE/);

  // An agent that cannot start (node 1's healthz port): the command fails as soon as it exits,
  // shows its log, and leaves no state dir behind.
  const failed = await nodelet(['lab', 'add-node', ...node('add-node-3', dir3, 'nla2'), '--healthz-port', '10248']);
  assert.notEqual(failed.code, 0, failed.out);
  assert.match(failed.out, /agent of node "add-node-3" exited/);
  assert.match(failed.out, /agent log/);
  assert.ok(failed.ms < 60_000, `add-node took ${failed.ms} ms to fail (the Ready timeout is 120 s)`);
  assert.equal(existsSync(dir3), false, 'the failed node\'s state dir is removed');
  assert.equal(existsSync(kubepodsDir(dir3)), false, 'nor are its cgroups left');
  t.diagnostic(`failed add-node returned after ${failed.ms} ms`);

  // remove-node: drained, stopped, and the Node object gone at once.
  const removed = await nodelet(['lab', 'remove-node', ...node('add-node-2', dir2, 'nla1')]);
  assert.equal(removed.code, 0, removed.out);
  assert.match(removed.out, /node object add-node-2/);
  const gone = await k.try('get', 'node', 'add-node-2');
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /NotFound/);
  assert.equal(existsSync(dir2), false);
  assert.equal(existsSync(kubepodsDir(dir2)), false, 'remove-node removes the node\'s cgroup tree');
  assert.ok(existsSync(kubepodsDir(dir1)), "and leaves node 1's");
});
