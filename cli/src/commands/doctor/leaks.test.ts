// The leak inventory against a fake CRI: what it cannot check is said, never passed over or
// reported as a leak.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCriClient, type CriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { doctor } from './command.js';
import { leakCheck } from './leaks.js';
import type { CheckResult } from './check.js';
import { cleanups, freePort } from '@nodelet/base/testing';

async function fixture(t: TestContext) {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-leaks-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const fake = await FakeCriServer.start();
  cleanup(() => fake.close());
  const cri = createCriClient({ endpoint: fake.endpoint });
  cleanup(() => cri.close());
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: { metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'uid-1' } } });
  const netnsDir = join(dir, 'netns');
  await mkdir(netnsDir);
  return { dir, fake, cri, podSandboxId, netnsDir };
}

test('a sandbox whose status fails makes the namespace check say it could not check, not report the namespace as leaked', async (t) => {
  const f = await fixture(t);
  await writeFile(join(f.netnsDir, 'cni-1234'), '');
  f.fake.runtime.injectError('PodSandboxStatus', 'INTERNAL', 'task state unknown');
  const results = (await leakCheck({ cri: f.cri, cniCacheDir: f.dir, ipamDataDir: join(f.dir, 'ipam'), netnsDir: f.netnsDir }).run(AbortSignal.timeout(10_000))) as CheckResult[];
  assert.deepEqual(results.filter((r) => r.level === 'fail'), [], 'nothing is called leaked');
  const warn = results.find((r) => r.id === 'leaks.netns');
  assert.equal(warn?.level, 'warn');
  assert.match(warn.message, /could not check: the status of sandbox ".{13}" failed: .*task state unknown/);
});

test('doctor --leaks with the API unreachable says the orphan check could not check instead of passing', async (t) => {
  const f = await fixture(t);
  const port = await freePort(); // nothing listens there
  const kubeconfig = join(f.dir, 'kubeconfig');
  await writeFile(kubeconfig, `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
current-context: c
`);
  const results = await doctor({
    containerRuntimeEndpoint: f.fake.endpoint, cniPluginDirs: f.dir, cniConfDir: f.dir, cniBinDir: f.dir,
    kubeconfig, nodeName: 'node-1', leaks: true, cniCacheDir: f.dir, ipamDir: join(f.dir, 'ipam'), netnsDir: f.netnsDir,
  });
  const leaks = results.filter((r) => r.id.startsWith('leaks'));
  assert.ok(!leaks.some((r) => r.level === 'pass'), `no pass line: ${JSON.stringify(leaks)}`);
  const warn = leaks.find((r) => r.id === 'leaks.sandbox');
  assert.equal(warn?.level, 'warn', JSON.stringify(leaks));
  assert.match(warn.message, /sandboxes against the API: could not check: .*(ECONNREFUSED|refused)/i);
});

const uid = 'u-1';
const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.name': 'web' };
const sb = (id: string, state: string, createdAt: string) => ({ id: id.padEnd(64, '0'), state, createdAt, labels, metadata: { name: 'web', namespace: 'default', uid, attempt: 0 } });
const ctr = (id: string, sandbox: string, state: string, createdAt: string) => ({ id: id.padEnd(64, '0'), podSandboxId: sandbox.padEnd(64, '0'), state, createdAt, labels: { ...labels, 'io.kubernetes.container.name': 'main' }, metadata: { name: 'main', attempt: 0 } });

function fakeCri(sandboxes: unknown[], containers: unknown[]): CriClient {
  return {
    runtime: {
      listPodSandbox: async () => ({ items: sandboxes }),
      podSandboxStatus: async () => ({ info: {} }),
      listContainers: async () => ({ containers }),
    },
  } as unknown as CriClient;
}

async function run(cri: CriClient, podUids?: Set<string>): Promise<CheckResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-leaks-'));
  try {
    const r = await leakCheck({ cri, cniCacheDir: dir, ipamDataDir: dir, netnsDir: dir, ...(podUids ? { apiPodUids: async () => podUids } : {}) }).run(AbortSignal.timeout(5_000));
    return Array.isArray(r) ? r : [r];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('leaks: the sandboxes a killed agent leaves (never started, not the newest) and dead attempts beyond the newest are listed', async () => {
  // issue 15: RunPodSandbox never returned (createdAt 0), an older stopped sandbox, the ready one; a Created
  // and an Exited attempt-0 beside the newest dead one.
  const rs = await run(
    fakeCri(
      [sb('aaaa', 'SANDBOX_READY', '3000000000'), sb('bbbb', 'SANDBOX_NOTREADY', '-6795364578871345152'), sb('cccc', 'SANDBOX_NOTREADY', '1000000000')],
      [ctr('c1', 'aaaa', 'CONTAINER_RUNNING', '5'), ctr('c2', 'aaaa', 'CONTAINER_EXITED', '4'), ctr('c3', 'aaaa', 'CONTAINER_CREATED', '3'), ctr('c4', 'cccc', 'CONTAINER_EXITED', '2')],
    ),
    new Set([uid]),
  );
  const dead = rs.filter((r) => r.id === 'leaks.dead-sandbox');
  assert.deepEqual(dead.map((r) => r.message.slice(9, 13)), ['cccc', 'bbbb']);
  assert.match(dead[1]!.message, /never finished starting/);
  assert.equal(dead[0]!.fix, `nodelet cri stopp ${'cccc'.padEnd(64, '0')} && nodelet cri rmp ${'cccc'.padEnd(64, '0')}`);
  const deadC = rs.filter((r) => r.id === 'leaks.dead-container');
  assert.deepEqual(deadC.map((r) => r.message.slice(11, 13)), ['c3', 'c4']);
  assert.match(deadC[0]!.message, /\(main, created\) of pod default\/web/);
});

test('leaks: a pod with one ready sandbox and one dead attempt is clean; a pod the API lacks is one leaks.sandbox line', async () => {
  const clean = await run(fakeCri([sb('aaaa', 'SANDBOX_READY', '3')], [ctr('c1', 'aaaa', 'CONTAINER_RUNNING', '5'), ctr('c2', 'aaaa', 'CONTAINER_EXITED', '4')]), new Set([uid]));
  assert.deepEqual(clean.map((r) => r.level), ['pass']);
  const gone = await run(fakeCri([sb('aaaa', 'SANDBOX_READY', '3'), sb('bbbb', 'SANDBOX_NOTREADY', '0')], []), new Set());
  assert.deepEqual(gone.map((r) => r.id), ['leaks.sandbox', 'leaks.sandbox']);
});
