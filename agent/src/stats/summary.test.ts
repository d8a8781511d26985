import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CpuRates } from './cpu-rate.js';
import { buildSummary, type CriContainerStats, type CriPodSandboxStats, type SummaryInputs } from './summary.js';
import type { NodeReadings } from './node-readings.js';

const S = 1e9;
const T0 = 1_700_000_000 * S;
const u = (n: number): { value: string } => ({ value: String(n) });

const node = (cpuNs: number): NodeReadings => ({
  stat: { cpuUsageNs: cpuNs, bootTimeS: 1_699_000_000 },
  memory: { capacityBytes: 8 * 2 ** 30, usageBytes: 3 * 2 ** 30, workingSetBytes: 2 * 2 ** 30, availableBytes: 6 * 2 ** 30, rssBytes: 2 ** 30, swapTotalBytes: 0, swapFreeBytes: 0 },
  pageFaults: 10,
  majorPageFaults: 1,
  interfaces: [{ name: 'ens3', rxBytes: 100, rxErrors: 0, txBytes: 200, txErrors: 0 }],
  defaultInterface: 'ens3',
  maxPid: 4194304,
  threads: 162,
});

const FS = { capacityBytes: 100e9, availableBytes: 60e9, usedBytes: 40e9, inodes: 1000, inodesFree: 600, inodesUsed: 400 };

function ctrStats(id: string, timeNs: number, cpuNs: number, ws: number): CriContainerStats {
  return {
    attributes: { id, metadata: { name: id, attempt: 0 }, labels: {}, annotations: {} },
    cpu: { timestamp: String(timeNs), usageCoreNanoSeconds: u(cpuNs), usageNanoCores: u(0) },
    memory: { timestamp: String(timeNs), workingSetBytes: u(ws), availableBytes: u(0), usageBytes: u(ws + 100), rssBytes: u(ws / 2), pageFaults: u(5), majorPageFaults: u(0) },
    writableLayer: { timestamp: '0', fsId: { mountpoint: '/var/lib/containerd/overlayfs' }, usedBytes: u(4096), inodesUsed: u(3) },
    swap: null,
  };
}

/** One pod (two containers) on containerd 1.6: no runtime pod stats, the pause cgroup and netns read directly. */
function round(t: number, yesCpuNs: number): SummaryInputs {
  return {
    nodeName: 'node-1',
    nowNs: t,
    node: node(yesCpuNs * 2),
    rootFs: FS,
    logsFs: FS,
    imageFs: { usedBytes: 5e9, inodesUsed: 50, timeNs: t, fs: FS },
    agent: { startTimeNs: T0 - 60 * S, cpuUsageNs: 2 * S, rssBytes: 50e6 },
    sandboxes: [{
      id: 'sb1', name: 'web', namespace: 'default', uid: 'uid-1', createdAtNs: T0 - 30 * S,
      pause: { timeNs: t, cpuUsageNs: 1000, memory: { usageBytes: 600, workingSetBytes: 500, rssBytes: 100, pageFaults: 1, majorPageFaults: 0 } },
      network: { timeNs: t, interfaces: [{ name: 'eth0', rxBytes: 1526, rxErrors: 0, txBytes: 542, txErrors: 0 }] },
      volumes: [{ name: 'scratch', usage: { usedBytes: 8192, inodesUsed: 2, complete: true }, fs: FS }, { name: 'not-walked-yet', fs: FS }],
    }],
    containers: [
      { id: 'yes', sandboxId: 'sb1', name: 'yes', createdAtNs: T0 - 20 * S, stats: ctrStats('yes', t, yesCpuNs, 1_000_000), logs: { usedBytes: 1024, inodesUsed: 2, complete: true } },
      { id: 'idle', sandboxId: 'sb1', name: 'idle', createdAtNs: T0 - 20 * S, stats: ctrStats('idle', t, 0, 2_000_000) },
      { id: 'orphan', sandboxId: 'gone', name: 'x', createdAtNs: T0, stats: ctrStats('orphan', t, 0, 1) },
    ],
  };
}

describe('Summary assembly', () => {
  it('pods without runtime pod stats: containers summed with the pause process; network from the pod netns', () => {
    const s = buildSummary(round(T0, 10 * S), new CpuRates());
    assert.equal(s.pods.length, 1);
    const p = s.pods[0]!;
    assert.deepEqual(p.podRef, { name: 'web', namespace: 'default', uid: 'uid-1' });
    assert.deepEqual(p.containers.map((c) => c.name), ['yes', 'idle']);
    assert.equal(p.cpu?.usageCoreNanoSeconds, 10 * S + 1000);
    assert.equal(p.cpu?.usageNanoCores, undefined, 'no rate from one sample');
    assert.equal(p.memory?.workingSetBytes, 1_000_000 + 2_000_000 + 500);
    assert.equal(p.memory?.usageBytes, 1_000_100 + 2_000_100 + 600);
    assert.deepEqual(p.network, { time: '2023-11-14T22:13:20.000Z', name: 'eth0', rxBytes: 1526, rxErrors: 0, txBytes: 542, txErrors: 0, interfaces: [{ name: 'eth0', rxBytes: 1526, rxErrors: 0, txBytes: 542, txErrors: 0 }] });
    // containerd's 0 availableBytes means "no limit": left out, as kubelet has none then.
    assert.equal(p.containers[0]!.memory?.availableBytes, undefined);
    assert.deepEqual(p.containers[0]!.rootfs, { time: '2023-11-14T22:13:20.000Z', availableBytes: 60e9, capacityBytes: 100e9, usedBytes: 4096, inodesFree: 600, inodes: 1000, inodesUsed: 3 });
    assert.equal(p.containers[0]!.logs?.usedBytes, 1024);
    assert.deepEqual(p.volume?.map((v) => [v.name, v.usedBytes, v.capacityBytes]), [['scratch', 8192, 100e9]]);
    // rootfs of both containers + the one log dir + the walked volume.
    assert.equal(p['ephemeral-storage']?.usedBytes, 4096 * 2 + 1024 + 8192);
    assert.equal(p['ephemeral-storage']?.inodesUsed, 3 * 2 + 2 + 2);
    assert.equal(p.startTime, new Date((T0 - 30 * S) / 1e6).toISOString());
  });

  it('rates come from the previous round of the same counter', () => {
    const rates = new CpuRates();
    buildSummary(round(T0, 10 * S), rates);
    const s = buildSummary(round(T0 + 10 * S, 20 * S), rates); // the yes container used 10 s of CPU in 10 s
    const p = s.pods[0]!;
    assert.equal(p.containers[0]!.cpu?.usageNanoCores, 1e9);
    assert.equal(p.containers[1]!.cpu?.usageNanoCores, 0);
    assert.equal(p.cpu?.usageNanoCores, 1e9);
    assert.equal(s.node.cpu?.usageNanoCores, 2e9);
  });

  it('the node: /proc numbers, filesystems, runtime image fs, rlimit, system containers', () => {
    const n = buildSummary(round(T0, 10 * S), new CpuRates()).node;
    assert.equal(n.nodeName, 'node-1');
    assert.equal(n.startTime, '2023-11-03T08:26:40.000Z');
    assert.deepEqual(n.memory, { time: '2023-11-14T22:13:20.000Z', availableBytes: 6 * 2 ** 30, usageBytes: 3 * 2 ** 30, workingSetBytes: 2 * 2 ** 30, rssBytes: 2 ** 30, pageFaults: 10, majorPageFaults: 1 });
    assert.equal(n.network?.name, 'ens3', 'no eth0: the default-route interface');
    assert.equal(n.fs?.capacityBytes, 100e9);
    assert.deepEqual(n.runtime?.imageFs, { time: '2023-11-14T22:13:20.000Z', availableBytes: 60e9, capacityBytes: 100e9, usedBytes: 5e9, inodesFree: 600, inodes: 1000, inodesUsed: 50 });
    assert.deepEqual(n.rlimit, { time: '2023-11-14T22:13:20.000Z', maxpid: 4194304, curproc: 162 });
    assert.deepEqual(n.systemContainers?.map((c) => c.name), ['kubelet', 'pods']);
    assert.equal(n.systemContainers?.[1]?.memory?.workingSetBytes, 3_000_500);
  });

  it('pods with runtime pod stats take CPU, memory and network from the runtime', () => {
    const inputs = round(T0, 10 * S);
    const cri: CriPodSandboxStats = {
      attributes: { id: 'sb1', metadata: null, labels: {}, annotations: {} },
      linux: {
        cpu: { timestamp: String(T0), usageCoreNanoSeconds: u(42 * S), usageNanoCores: u(0) },
        memory: { timestamp: String(T0), workingSetBytes: u(7), availableBytes: u(93), usageBytes: u(9), rssBytes: u(1), pageFaults: u(2), majorPageFaults: u(0) },
        network: { timestamp: String(T0), defaultInterface: { name: 'eth0', rxBytes: u(1), rxErrors: u(0), txBytes: u(2), txErrors: u(0) }, interfaces: [] },
        process: { timestamp: String(T0), processCount: u(4) },
        containers: [],
      },
      windows: null,
    };
    inputs.sandboxes[0] = { ...inputs.sandboxes[0]!, cri, pause: undefined, network: undefined };
    const p = buildSummary(inputs, new CpuRates()).pods[0]!;
    assert.equal(p.cpu?.usageCoreNanoSeconds, 42 * S);
    assert.equal(p.memory?.workingSetBytes, 7);
    assert.equal(p.memory?.availableBytes, 93);
    assert.equal(p.network?.rxBytes, 1);
    assert.deepEqual(p.process_stats, { process_count: 4 });
  });
});
