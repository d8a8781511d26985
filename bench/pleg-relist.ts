// The PLEG's own JavaScript per relist with N idle pods: the agent's Pleg over an in-process
// runtime that answers the two listings with N running pods (one sandbox, one container each),
// as containerd does on an idle node. CPU time from process.cpuUsage, so the figure does not
// depend on how loaded the machine is (wall time would); the listings' own cost (a structured
// clone standing in for the gRPC decode) is measured alone and subtracted.
//
// `--grpc` measures the whole relist as the agent pays it instead: the real CRI client over a unix
// socket to the fake CRI server, which runs in a child process (this file with `--serve`) so
// that only the client's CPU (encode, HTTP/2, decode, the PLEG) is counted.
//
//   node --conditions=source --import tsx bench/pleg-relist.ts [--pods 30] [--relists 5000] [--grpc]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { noopLogger, systemClock } from '@nodelet/base';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import type { CriContainer, CriSandbox, RuntimeService } from '../agent/src/kubecontainer/cri.js';
import { CONTAINER_NAME, MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID } from '../agent/src/kubecontainer/labels.js';
import { Pleg } from '../agent/src/pleg/pleg.js';

const { values: args } = parseArgs({
  options: { pods: { type: 'string', default: '30' }, relists: { type: 'string', default: '5000' }, grpc: { type: 'boolean', default: false }, serve: { type: 'string' } },
});
const PODS = Number(args.pods);
const RELISTS = Number(args.relists);
if (!Number.isInteger(PODS) || PODS < 1 || !Number.isInteger(RELISTS) || RELISTS < 1) throw new Error('--pods and --relists take positive integers');

const IMAGE = 'docker.io/library/busybox:latest';
const uidOf = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const podLabels = (i: number): Record<string, string> => ({ [MANAGED_BY]: 'true', [POD_UID]: uidOf(i), [POD_NAME]: `pod-${i}`, [POD_NAMESPACE]: 'default', app: 'idle' });
const CONTAINER_ANNOTATIONS = { 'io.kubernetes.container.hash': '1a2b3c', 'io.kubernetes.container.restartCount': '0' };

/** Child process: the fake CRI server with PODS running pods, until its parent closes stdin. */
async function serve(socketPath: string): Promise<void> {
  const fake = await FakeCriServer.start({ socketPath });
  const rt = fake.runtime;
  rt.addImage(IMAGE);
  for (let i = 0; i < PODS; i++) {
    const sb = rt.runPodSandbox({ metadata: { name: `pod-${i}`, uid: uidOf(i), namespace: 'default', attempt: 0 }, labels: podLabels(i) });
    const c = rt.createContainer(sb, { metadata: { name: 'main', attempt: 0 }, image: { image: IMAGE }, labels: { ...podLabels(i), [CONTAINER_NAME]: 'main' }, annotations: CONTAINER_ANNOTATIONS });
    rt.startContainer(c);
  }
  process.stdout.write('ready\n');
  process.stdin.resume();
  await once(process.stdin, 'end');
  await fake.close();
}

function inProcessRuntime(): { runtime: RuntimeService; listings: () => Promise<unknown> } {
  const sandboxes: CriSandbox[] = [];
  const containers: CriContainer[] = [];
  for (let i = 0; i < PODS; i++) {
    const uid = uidOf(i);
    const sandboxId = `s${i}`.padEnd(64, '0');
    const labels = podLabels(i);
    sandboxes.push({ id: sandboxId, state: 'SANDBOX_READY', labels, annotations: {}, createdAt: '1733300000000000000', runtimeHandler: '', metadata: { name: `pod-${i}`, uid, namespace: 'default', attempt: 0 } } as unknown as CriSandbox);
    containers.push({
      id: `c${i}`.padEnd(64, '0'), podSandboxId: sandboxId, state: 'CONTAINER_RUNNING', labels: { ...labels, [CONTAINER_NAME]: 'main' },
      annotations: CONTAINER_ANNOTATIONS, createdAt: '1733300000000000001', imageRef: `sha256:${'1'.repeat(64)}`, image: { image: IMAGE }, metadata: { name: 'main', attempt: 0 },
    } as unknown as CriContainer);
  }
  const listSandboxes = async () => ({ items: sandboxes.map((s) => structuredClone(s)) });
  const listContainers = async () => ({ containers: containers.map((c) => structuredClone(c)) });
  const runtime = {
    listPodSandbox: listSandboxes,
    listContainers,
    podSandboxStatus: async () => ({ status: { network: { ip: '10.88.0.2', additionalIps: [] } } }),
    containerStatus: async (req: { containerId: string }) => ({ status: { id: req.containerId, state: 'CONTAINER_RUNNING', startedAt: '1733300000000000002', finishedAt: '0', exitCode: 0, logPath: '/var/log/pods/x/main/0.log' } }),
  } as unknown as RuntimeService;
  return { runtime, listings: () => Promise.all([listSandboxes(), listContainers()]) };
}

const cpuUs = (since: NodeJS.CpuUsage): number => { const d = process.cpuUsage(since); return d.user + d.system; };

/**
 * Bytes allocated on the V8 heap while `fn` runs (what the young generation has to collect), from
 * the heap used before each GC less the heap used after the one before: a count that, unlike CPU
 * time, does not move with the machine's load.
 */
async function allocatedBytes(fn: () => Promise<void>): Promise<number> {
  const prof = new GCProfiler();
  const used0 = getHeapStatistics().used_heap_size;
  prof.start();
  await fn();
  const used1 = getHeapStatistics().used_heap_size;
  let total = 0;
  let after = used0;
  for (const s of prof.stop()?.statistics ?? []) {
    total += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
  }
  return total + Math.max(0, used1 - after);
}

/** CPU µs and heap KiB allocated per relist. */
async function measure(runtime: RuntimeService): Promise<{ us: number; kib: number }> {
  const pleg = new Pleg({ runtime, clock: systemClock, log: noopLogger, onPodChanged: () => undefined });
  const stop = new AbortController();
  for (let i = 0; i < 200; i++) await pleg.relist(stop.signal); // warm-up: statuses cached, code optimised
  if (pleg.all().size !== PODS) throw new Error(`the PLEG sees ${pleg.all().size} pods, not ${PODS}`);
  const t = process.cpuUsage();
  for (let i = 0; i < RELISTS; i++) await pleg.relist(stop.signal);
  const us = cpuUs(t) / RELISTS;
  const n = Math.min(RELISTS, 500);
  const bytes = await allocatedBytes(async () => { for (let i = 0; i < n; i++) await pleg.relist(stop.signal); });
  return { us, kib: bytes / n / 1024 };
}

async function main(): Promise<void> {
  if (args.serve) return serve(args.serve);
  if (!args.grpc) {
    const { runtime, listings } = inProcessRuntime();
    const { us: relistUs, kib } = await measure(runtime);
    const t = process.cpuUsage();
    for (let i = 0; i < RELISTS; i++) await listings();
    const listingUs = cpuUs(t) / RELISTS;
    const listingKib = (await allocatedBytes(async () => { for (let i = 0; i < 500; i++) await listings(); })) / 500 / 1024;
    console.log(`pleg relist, ${PODS} idle pods, ${RELISTS} relists: ${relistUs.toFixed(0)} us CPU each, of which the listings ${listingUs.toFixed(0)} us; PLEG's own ${(relistUs - listingUs).toFixed(0)} us (${((relistUs - listingUs) * 60 / 1000).toFixed(1)} ms CPU a minute at one relist a second); ${kib.toFixed(1)} KiB allocated per relist, of which the listings ${listingKib.toFixed(1)}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-pleg-bench-'));
  const socket = join(dir, 'cri.sock');
  const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--serve', socket, '--pods', String(PODS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    if (!line.toString().startsWith('ready')) throw new Error(`fake CRI server: ${line.toString()}`);
    const cri = createCriClient({ endpoint: `unix://${socket}` });
    try {
      const { us, kib } = await measure(cri.runtime);
      console.log(`pleg relist over gRPC (client side only), ${PODS} idle pods, ${RELISTS} relists: ${us.toFixed(0)} us CPU each (${(us / 10_000).toFixed(3)} % of a core at one relist a second), ${kib.toFixed(1)} KiB allocated per relist`);
    } finally {
      cri.close();
    }
  } finally {
    child.stdin.end();
    await once(child, 'exit');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
