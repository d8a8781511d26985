// The leak inventory against a fake CRI: what it cannot check is said, never passed over or
// reported as a leak.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { doctor } from './command.js';
import { leakCheck } from './leaks.js';
import type { CheckResult } from './check.js';
import { freePort } from '@nodelet/base/testing';

async function fixture(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-leaks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const fake = await FakeCriServer.start();
  t.after(() => fake.close());
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(() => cri.close());
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
