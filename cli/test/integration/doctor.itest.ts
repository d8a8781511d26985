// `nodelet doctor` on a healthy node (a real containerd + the real Debian CNI plugins), then with
// one fault injected at a time: a plugin removed, a leaked netns and IP file planted, the runtime
// stopped. Each fault must be named with its fix, and the exit code must reflect the worst result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, symlinkSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { startTestRuntime, requireRoot } from '@nodelet/lab-runtime/testing';
import { connectCriClient } from '@nodelet/cri-client';
import { doctor, type DoctorOptions } from '../../src/commands/doctor/command.js';
import { exitCodeFor, type CheckResult } from '../../src/commands/doctor/check.js';
import { cleanups } from '@nodelet/base/testing';

const byId = (rs: CheckResult[], id: string) => rs.filter((r) => r.id === id);

test('nodelet doctor: healthy node passes; each injected fault is named with its fix', async (t) => {
  const cleanup = cleanups(t);
  if (!requireRoot(t)) return;
  const rt = await startTestRuntime({ name: 'doctor', bridge: { name: 'nll0', subnet: '10.235.0.0/24' } });
  cleanup(() => rt.stop());
  const work = mkdtempSync(join(tmpdir(), 'nodelet-doctor-'));
  cleanup(() => rmSync(work, { recursive: true, force: true }));
  // A plugin dir of our own (links to the Debian plugins) so a test can remove one.
  const plugins = join(work, 'plugins');
  mkdirSync(plugins);
  for (const p of readdirSync('/usr/lib/cni')) symlinkSync(join('/usr/lib/cni', p), join(plugins, p));
  const ipam = join(work, 'networks');
  mkdirSync(join(ipam, 'nodelet-pods'), { recursive: true });

  const opts: DoctorOptions = {
    containerRuntimeEndpoint: rt.endpoint,
    cniPluginDirs: plugins,
    cniConfDir: rt.cniConfDir,
    cniBinDir: rt.cniBinDir,
    cniCacheDir: join(work, 'cni-cache'),
    ipamDir: ipam,
    netnsDir: join(work, 'netns'),
    leaks: true,
  };

  await t.test('healthy: runtime, CNI and leak checks all pass', async () => {
    const rs = await doctor(opts);
    const nodeChecks = rs.filter((r) => /^(runtime|cni|leaks)/.test(r.id));
    assert.ok(nodeChecks.length >= 8, JSON.stringify(rs));
    for (const r of nodeChecks) assert.equal(r.level, 'pass', `${r.id}: ${r.message}`);
    assert.match(byId(rs, 'runtime.version')[0]!.message, /^containerd /);
    assert.ok(rs.every((r) => r.level !== 'fail'), JSON.stringify(rs.filter((r) => r.level === 'fail')));
  });

  await t.test('a missing plugin fails with the package to install', async (st) => {
    rmSync(join(plugins, 'portmap'));
    st.after(() => symlinkSync('/usr/lib/cni/portmap', join(plugins, 'portmap')));
    const rs = await doctor(opts);
    const [r] = byId(rs, 'cni.plugin.portmap');
    assert.equal(r?.level, 'fail');
    assert.match(r!.message, /"portmap" not found/);
    assert.match(r!.fix!, /containernetworking-plugins/);
    assert.equal(exitCodeFor(rs), 2);
  });

  await t.test('a leaked netns and IP allocation are listed with the command that removes them', async () => {
    mkdirSync(opts.netnsDir, { recursive: true });
    const ns = `cni-nodelet-doctor-${process.pid}`;
    writeFileSync(join(opts.netnsDir, ns), '');
    writeFileSync(join(ipam, 'nodelet-pods', '10.235.0.77'), 'f00dfeed0000000000000000000000000000\neth0');
    const rs = await doctor(opts);
    const netns = byId(rs, 'leaks.netns');
    assert.equal(netns.length, 1, JSON.stringify(rs));
    assert.match(netns[0]!.message, new RegExp(ns));
    assert.equal(netns[0]!.fix, `ip netns delete ${ns}`);
    const ip = byId(rs, 'leaks.ip');
    assert.equal(ip.length, 1);
    assert.match(ip[0]!.message, /10\.235\.0\.77 of network "nodelet-pods" is allocated to "f00dfeed00000"/);
    rmSync(join(opts.netnsDir, ns));
    rmSync(join(ipam, 'nodelet-pods', '10.235.0.77'));
  });

  await t.test('what a killed agent leaves: a sandbox not ready and not the newest, a Created attempt beside a newer one', async () => {
    // Issue 15: the agent died inside RunPodSandbox / before StartContainer; the restarted agent made new ones.
    const { client: cri } = await connectCriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
    try {
      await cri.image.pullImage({ image: { image: rt.images.busybox } });
      const uid = `doctor-dead-${process.pid}`;
      const labels = { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default' };
      const config = (attempt: number) => ({
        metadata: { name: 'web', namespace: 'default', uid, attempt },
        labels,
        linux: { securityContext: { namespaceOptions: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const } } },
      });
      const old = (await cri.runtime.runPodSandbox({ config: config(0) })).podSandboxId;
      await cri.runtime.stopPodSandbox({ podSandboxId: old });
      const cur = (await cri.runtime.runPodSandbox({ config: config(1) })).podSandboxId;
      // containerd reserves a container's name per pod and attempt: the restarted agent's try is attempt 1.
      const ctr = async (attempt: number) =>
        (await cri.runtime.createContainer({
          podSandboxId: cur,
          sandboxConfig: config(1),
          config: { metadata: { name: 'main', attempt }, image: { image: rt.images.busybox }, command: ['true'], labels: { ...labels, 'io.kubernetes.container.name': 'main' } },
        })).containerId;
      const created = await ctr(0);
      const newer = await ctr(1);
      try {
        const rs = await doctor({ ...opts, leaks: true });
        const dead = byId(rs, 'leaks.dead-sandbox');
        assert.equal(dead.length, 1, JSON.stringify(rs.filter((r) => r.id.startsWith('leaks'))));
        assert.match(dead[0]!.message, new RegExp(`sandbox "${old.slice(0, 13)}" of pod default/web is not ready and not the pod's newest`));
        assert.equal(dead[0]!.fix, `nodelet cri stopp ${old} && nodelet cri rmp ${old}`);
        const deadC = byId(rs, 'leaks.dead-container');
        assert.equal(deadC.length, 1);
        assert.match(deadC[0]!.message, new RegExp(`container "${created.slice(0, 13)}" \\(main, created\\) of pod default/web`));
        assert.ok(!deadC[0]!.message.includes(newer.slice(0, 13)), 'the newest dead attempt is kept');
      } finally {
        // Removing a sandbox removes its containers; the runtime is stopped by t.after in any case.
        for (const id of [cur, old]) {
          await cri.runtime.stopPodSandbox({ podSandboxId: id });
          await cri.runtime.removePodSandbox({ podSandboxId: id });
        }
      }
    } finally {
      cri.close();
    }
  });

  await t.test('a stopped runtime fails the socket check within the deadline, no hang', async () => {
    await rt.stop();
    const started = Date.now();
    const rs = await doctor(opts);
    assert.ok(Date.now() - started < 20_000);
    const [r] = byId(rs, 'runtime.socket');
    assert.equal(r?.level, 'fail');
    assert.match(r!.fix!, /start containerd/);
    assert.equal(exitCodeFor(rs), 2);
  });

  // The real host netns dir must not have gained anything from us.
  assert.ok(!execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes('nodelet-doctor'));
});
