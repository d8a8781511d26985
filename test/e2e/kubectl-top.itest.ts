// `kubectl top` against a lab cluster (`nodelet lab up` on private ports, state dir, bridge nle-top,
// cluster CIDR 10.227.0.0/16): the agent samples resource stats, the control plane's metrics-server
// scrapes the node's /metrics/resource as kube-system/metrics-server, and the API server serves
// metrics.k8s.io, which the real kubectl finds through discovery.
//
// A pod running `yes > /dev/null` uses at most one core (`yes` is single-threaded); the lab VM has
// two cores shared with other sessions, so the lower bound is loose (300m) — what is checked is
// that real, non-zero numbers arrive through every hop, in kubectl's own table.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

const NODE = 'top-node';

/** Rows of a kubectl table, split on runs of spaces, header first. */
const rows = (out: string): string[][] => out.trim().split('\n').map((l) => l.trim().split(/\s+/));
/** `1234m` / `1` → millicores. */
const millis = (cpu: string): number => (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
/** `123Mi` → MiB. */
const mib = (mem: string): number => (mem.endsWith('Mi') ? Number(mem.slice(0, -2)) : mem.endsWith('Gi') ? Number(mem.slice(0, -2)) * 1024 : Number.NaN);

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('kubectl top: nodes and pods through metrics.k8s.io', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-top-'));
  let lab: Parameters<typeof labUp>[0];
  let k: Kubectl;

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.227.0.0/16', bridge: 'nle-top', nodeName: NODE, nodeApiPort: nodePort, healthzPort };
    const up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    await k('run', 'burn', `--image=${up.images.busybox}`, '--restart=Never', '--', 'sh', '-c', 'yes > /dev/null');
    await k('run', 'idle', `--image=${up.images.busybox}`, '--restart=Never', '--', 'sleep', '3600');
    await k('wait', '--for=condition=Ready', 'pod/burn', 'pod/idle', '--timeout=120s');
  });

  after(async () => {
    if (k) await k.try('delete', 'pod', '--all', '--grace-period=1', '--wait=true', '--timeout=60s');
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('kubectl top pods, --containers, -l and one pod print the burning pod near a core', { timeout: 240_000 }, async () => {
    // Two agent samples (10 s apart) and two scrapes (15 s apart) before the first rate.
    const out = await pollUntil('kubectl top pods to list both pods', async () => {
      const r = await k.try('top', 'pods');
      return r.code === 0 && /^burn\s/m.test(r.stdout) && /^idle\s/m.test(r.stdout) ? r.stdout : undefined;
    }, { timeoutMs: 150_000, intervalMs: 2000, detail: async () => JSON.stringify(await k.try('top', 'pods')) });
    const table = rows(out);
    assert.deepEqual(table[0], ['NAME', 'CPU(cores)', 'MEMORY(bytes)']);
    const burn = table.find((r) => r[0] === 'burn')!;
    assert.ok(millis(burn[1]!) >= 300 && millis(burn[1]!) <= 1300, `burn at ${burn[1]}`);
    assert.ok(mib(burn[2]!) >= 0, `burn memory ${burn[2]}`);
    const idle = table.find((r) => r[0] === 'idle')!;
    assert.ok(millis(idle[1]!) < 100, `idle at ${idle[1]}`);

    const containers = rows(await k('top', 'pods', '-A', '--containers'));
    assert.deepEqual(containers[0], ['NAMESPACE', 'POD', 'NAME', 'CPU(cores)', 'MEMORY(bytes)']);
    const row = containers.find((r) => r[1] === 'burn')!;
    assert.deepEqual(row.slice(0, 3), ['default', 'burn', 'burn']);
    assert.ok(millis(row[3]!) >= 300, `burn container at ${row[3]}`);

    const selected = rows(await k('top', 'pods', '-l', 'run=idle'));
    assert.deepEqual(selected.slice(1).map((r) => r[0]), ['idle']);
    const one = rows(await k('top', 'pod', 'burn', '--no-headers'));
    assert.equal(one[0]![0], 'burn');
  });

  it('kubectl top nodes prints the node with usage and percentages of allocatable', { timeout: 120_000 }, async () => {
    const out = await pollUntil('kubectl top nodes to list the node', async () => {
      const r = await k.try('top', 'nodes');
      return r.code === 0 && r.stdout.includes(NODE) ? r.stdout : undefined;
    }, { timeoutMs: 90_000, intervalMs: 2000, detail: async () => JSON.stringify(await k.try('top', 'nodes')) });
    const table = rows(out);
    assert.deepEqual(table[0], ['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']);
    const [name, cpu, cpuPct, mem, memPct] = table.find((r) => r[0] === NODE)!;
    assert.equal(name, NODE);
    assert.ok(millis(cpu!) >= 300, `node CPU ${cpu} (the burning pod alone uses more)`);
    assert.match(cpuPct!, /^\d+%$/);
    assert.ok(mib(mem!) > 10, `node memory ${mem}`);
    assert.match(memPct!, /^\d+%$/);
  });
});
