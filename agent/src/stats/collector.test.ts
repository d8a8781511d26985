// The collector against the fake CRI server (a real gRPC server) with containerd 1.6's refusal of
// ListPodSandboxStats, and a fake /proc and /sys: pod numbers are the containers' plus the pause
// process's cgroup, read where mountinfo says the controllers are.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, systemClock } from '@nodelet/base';
import { createCriClient, type CriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { FakeClock } from '@nodelet/base/testing';
import type { ReadText } from './cgroup.js';
import { StatsCollector } from './collector.js';

const IMAGE = 'registry.test/busybox:1';
const PAUSE_PID = 4242; // the fake runtime's sandbox pid

const PROC: Record<string, string> = {
  '/proc/self/mountinfo': [
    '26 25 0:25 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
    '28 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
    '30 25 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  ].join('\n'),
  [`/proc/${PAUSE_PID}/cgroup`]: '4:memory:/k8s.io/pause1\n2:cpuacct:/k8s.io/pause1\n0::/k8s.io/pause1\n',
  '/sys/fs/cgroup/cpuacct/k8s.io/pause1/cpuacct.usage': '5000000\n',
  '/sys/fs/cgroup/memory/k8s.io/pause1/memory.usage_in_bytes': '400000\n',
  '/sys/fs/cgroup/memory/k8s.io/pause1/memory.stat': 'total_inactive_file 100000\ntotal_rss 50000\npgfault 9\npgmajfault 0\n',
  [`/proc/${PAUSE_PID}/net/dev`]: 'h1\nh2\n  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n    lo: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n',
  '/proc/stat': 'cpu  100 0 100 1000 0 0 0 0 0 0\nbtime 1700000000\n',
  '/proc/meminfo': 'MemTotal: 1000 kB\nMemFree: 500 kB\nInactive(file): 100 kB\nAnonPages: 200 kB\n',
};

const read: ReadText = async (p) => {
  const v = PROC[p];
  if (v === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
  return v;
};

const FS = { capacityBytes: 1e9, availableBytes: 5e8, usedBytes: 5e8, inodes: 100, inodesFree: 50, inodesUsed: 50 };

describe('stats collector', () => {
  let fake: FakeCriServer;
  let cri: CriClient;
  let dir: string;
  before(async () => {
    fake = await FakeCriServer.start();
    fake.runtime.addImage(IMAGE);
    cri = createCriClient({ endpoint: fake.endpoint });
    dir = await mkdtemp(join(tmpdir(), 'nodelet-stats-'));
    const config = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 }, logDirectory: join(dir, 'logs', 'default_web_uid-1') };
    const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
    for (const name of ['a', 'b']) {
      const { containerId } = await cri.runtime.createContainer({ podSandboxId, sandboxConfig: config, config: { metadata: { name, attempt: 0 }, image: { image: IMAGE }, logPath: `${name}/0.log` } });
      await cri.runtime.startContainer({ containerId });
    }
    await mkdir(join(dir, 'logs', 'default_web_uid-1', 'a'), { recursive: true });
    await writeFile(join(dir, 'logs', 'default_web_uid-1', 'a', '0.log'), 'x'.repeat(5000));
    await mkdir(join(dir, 'root', 'pods', 'uid-1', 'volumes', 'kubernetes.io~empty-dir', 'scratch'), { recursive: true });
  });
  after(async () => {
    cri.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sums containers and the pause cgroup when the runtime cannot give pod stats, and asks again only later', async () => {
    const rpc = 'ListPodSandboxStats';
    fake.runtime.injectError(rpc, 'UNKNOWN', 'failed to get cgroup metrics for sandbox because cgroupPath is empty');
    const collector = new StatsCollector({
      runtime: cri.runtime, images: cri.image, nodeName: 'node-1', rootDir: join(dir, 'root'), podLogsDir: join(dir, 'logs'),
      clock: systemClock, log: noopLogger, read, statfs: async () => FS,
    });
    const first = await collector.collect(AbortSignal.timeout(10_000));
    const p = first.pods[0]!;
    assert.deepEqual(p.podRef, { name: 'web', namespace: 'default', uid: 'uid-1' });
    assert.deepEqual(p.containers.map((c) => c.name).sort(), ['a', 'b']);
    const containerCpu = p.containers.reduce((a, c) => a + (c.cpu?.usageCoreNanoSeconds ?? 0), 0);
    assert.equal(p.cpu?.usageCoreNanoSeconds, containerCpu + 5_000_000, 'containers + pause');
    // The fake's containers have 1 MiB working set each; the pause cgroup 400000 − 100000.
    assert.equal(p.memory?.workingSetBytes, 2 * 1048576 + 300_000);
    assert.equal(p.network?.name, 'eth0');
    assert.equal(p.network?.rxBytes, 1000);
    assert.equal(p.containers.find((c) => c.name === 'a')?.logs?.usedBytes !== undefined, true);
    assert.ok((p.containers.find((c) => c.name === 'a')?.logs?.usedBytes ?? 0) >= 4096);
    assert.equal(first.node.cpu?.usageCoreNanoSeconds, 200 * 10_000_000);
    assert.equal(first.node.memory?.workingSetBytes, 400 * 1024);

    // Second round: rates from the first; ListPodSandboxStats is not asked again this soon.
    const calls = (): number => fake.runtime.calls.filter((c) => c.rpc === rpc).length;
    const before = calls();
    await new Promise((r) => setTimeout(r, 20));
    const second = await collector.collect(AbortSignal.timeout(10_000));
    assert.equal(calls(), before);
    for (const c of second.pods[0]!.containers) assert.equal(typeof c.cpu?.usageNanoCores, 'number', `${c.name} has a rate`);
    assert.equal(second.node.cpu?.usageNanoCores, 0, 'the fake /proc/stat did not move');
    // The volume walk ran in the background since the first round.
    assert.deepEqual(second.pods[0]!.volume?.map((v) => v.name), ['scratch']);
    assert.equal(await collector.summary(), second);
  });

  it('uses the runtime pod stats when it has them', async () => {
    const collector = new StatsCollector({
      runtime: cri.runtime, images: cri.image, nodeName: 'node-1', rootDir: join(dir, 'root'), podLogsDir: join(dir, 'logs'),
      clock: systemClock, log: noopLogger, read, statfs: async () => FS,
    });
    const s = await collector.collect(AbortSignal.timeout(10_000));
    const p = s.pods[0]!;
    // The fake's pod stats have no network and no pause share: the numbers are the runtime's.
    assert.equal(p.network, undefined);
    assert.equal(p.memory?.workingSetBytes, 2 * 1048576);
  });

  it('run() samples on the period until stopped, and summary() waits for the first round', async () => {
    const collector = new StatsCollector({
      runtime: cri.runtime, images: cri.image, nodeName: 'node-1', rootDir: join(dir, 'root'), podLogsDir: join(dir, 'logs'),
      clock: systemClock, log: noopLogger, read, statfs: async () => FS, periodMs: 10,
    });
    const stop = new AbortController();
    const first = collector.summary();
    const loop = collector.run(stop.signal);
    assert.equal((await first).pods.length, 1);
    const listed = (): number => fake.runtime.calls.filter((c) => c.rpc === 'ListContainerStats').length;
    const n = listed();
    while (listed() < n + 2) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await loop;
  });

  it('looks up a pod\'s volume directories and their filesystems once per volumeStatsAggPeriod, not every round', async () => {
    const clock = new FakeClock();
    const volumes = join(dir, 'root', 'pods', 'uid-1', 'volumes', 'kubernetes.io~empty-dir');
    const statfsOf: string[] = [];
    const collector = new StatsCollector({
      runtime: cri.runtime, images: cri.image, nodeName: 'node-1', rootDir: join(dir, 'root'), podLogsDir: join(dir, 'logs'),
      clock, log: noopLogger, read, statfs: async (p) => (statfsOf.push(p), FS),
    });
    const volumeStatfs = () => statfsOf.filter((p) => p.startsWith(volumes)).sort();
    const names = (s: Awaited<ReturnType<StatsCollector['collect']>>) => s.pods[0]!.volume?.map((v) => v.name).sort() ?? [];
    await collector.collect(AbortSignal.timeout(10_000));
    await mkdir(join(volumes, 'later'));
    try {
      clock.advance(10_000); // the next round
      const second = await collector.collect(AbortSignal.timeout(10_000));
      assert.deepEqual(volumeStatfs(), [join(volumes, 'scratch')], 'one statfs of the volume in two rounds');
      assert.deepEqual(names(second).filter((n) => n !== 'scratch'), [], 'the volume list is the one looked up a round ago');
      clock.advance(50_000); // 60 s after the first lookup
      await collector.collect(AbortSignal.timeout(10_000));
      assert.deepEqual(volumeStatfs(), [join(volumes, 'later'), join(volumes, 'scratch'), join(volumes, 'scratch')]);
    } finally {
      await rm(join(volumes, 'later'), { recursive: true, force: true });
    }
  });
});
