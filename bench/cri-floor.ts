// CRI runtime floor: N pods (sandbox + one busybox container) started and removed directly
// through @nodelet/cri-client against a private containerd from the lab harness. Later agent
// benchmarks are compared with these numbers: whatever the agent adds sits on top of them.
//
//   node --conditions=source --import tsx bench/cri-floor.ts --pods 20 --concurrency 4 [--json]
//
// Per pod, in order:  runp    RunPodSandbox (includes CNI bridge + host-local ADD)
//                     create  CreateContainer (busybox, pulled once before the clock starts)
//                     start   StartContainer
//                     stop    StopContainer(timeout 0) + StopPodSandbox (CNI DEL)
//                     rm      RemoveContainer + RemovePodSandbox
// Prints p50/p99 per step, per-pod total, and wall time / throughput. Needs root.
import { parseArgs } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRuntime } from '@nodelet/lab-runtime/testing';
import { createCriClient, handshake, type CriClient, type PodSandboxConfig } from '@nodelet/cri-client';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const PODS = Number(args.pods);
const CONCURRENCY = Number(args.concurrency);
if (!Number.isInteger(PODS) || PODS < 1 || !Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  console.error('usage: bench/cri-floor.ts --pods N --concurrency C (positive integers)');
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error('bench/cri-floor needs root: it starts containerd and creates network namespaces');
  process.exit(2);
}

const STEPS = ['runp', 'create', 'start', 'stop', 'rm', 'total'] as const;
type Step = (typeof STEPS)[number];
const LABEL = { 'nodelet.bench/suite': 'cri-floor' };

async function timed(samples: number[], fn: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await fn();
  samples.push(performance.now() - t0);
}

async function onePod(cri: CriClient, i: number, image: string, logDir: string, samples: Record<Step, number[]>, signal: AbortSignal): Promise<void> {
  const uid = `bench-${process.pid}-${i}`;
  const config: PodSandboxConfig = {
    metadata: { name: `floor-${i}`, namespace: 'bench', uid, attempt: 0 },
    hostname: `floor-${i}`,
    logDirectory: join(logDir, uid),
    labels: LABEL,
    linux: {},
  };
  const t0 = performance.now();
  let podSandboxId = '';
  let containerId = '';
  await timed(samples.runp, async () => ({ podSandboxId } = await cri.runtime.runPodSandbox({ config }, { signal })));
  await timed(samples.create, async () => {
    ({ containerId } = await cri.runtime.createContainer(
      { podSandboxId, config: { metadata: { name: 'main' }, image: { image }, command: ['/bin/sleep', '3600'], logPath: 'main.log', labels: LABEL, linux: {} }, sandboxConfig: config },
      { signal },
    ));
  });
  await timed(samples.start, () => cri.runtime.startContainer({ containerId }, { signal }));
  await timed(samples.stop, async () => {
    await cri.runtime.stopContainer({ containerId, timeout: '0' }, { signal });
    await cri.runtime.stopPodSandbox({ podSandboxId }, { signal });
  });
  await timed(samples.rm, async () => {
    await cri.runtime.removeContainer({ containerId }, { signal });
    await cri.runtime.removePodSandbox({ podSandboxId }, { signal });
  });
  samples.total.push(performance.now() - t0);
}

const ac = new AbortController();
process.once('SIGINT', () => ac.abort());
const rt = await startTestRuntime({ name: 'cri-floor', bridge: { name: 'nla2', subnet: '10.231.128.0/17' } });
const cri = createCriClient({ endpoint: rt.endpoint });
const logDir = await mkdtemp(join(tmpdir(), 'nodelet-cri-floor-'));
let failed = false;
try {
  const version = await handshake(cri);
  await cri.image.pullImage({ image: { image: rt.images.busybox } });
  const samples = Object.fromEntries(STEPS.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
  let next = 0;
  const wall0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, PODS) }, async () => {
      while (next < PODS && !ac.signal.aborted) await onePod(cri, next++, rt.images.busybox, logDir, samples, ac.signal);
    }),
  );
  const wallMs = performance.now() - wall0;
  const rows = STEPS.map((s) => {
    const sorted = [...samples[s]].sort((a, b) => a - b);
    return { step: s, n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  });
  if (args.json) {
    console.log(JSON.stringify({ runtime: `${version.runtimeName} ${version.runtimeVersion}`, pods: PODS, concurrency: CONCURRENCY, wallMs, steps: rows }, null, 2));
  } else {
    console.log(`cri-floor: ${PODS} pods, concurrency ${CONCURRENCY}, ${version.runtimeName} ${version.runtimeVersion}`);
    console.log(`${'step'.padEnd(8)}${'n'.padStart(6)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}`);
    for (const r of rows) console.log(`${r.step.padEnd(8)}${String(r.n).padStart(6)}${r.p50.toFixed(1).padStart(10)}${r.p99.toFixed(1).padStart(10)}`);
    console.log(`wall ${(wallMs / 1000).toFixed(2)} s, ${((PODS / wallMs) * 1000).toFixed(2)} pods/s`);
  }
} catch (err) {
  failed = true;
  console.error(`cri-floor failed: ${(err as Error).message}`);
} finally {
  // Leftovers of a failed or interrupted run: remove every sandbox we labelled.
  const left = await cri.runtime.listPodSandbox({ filter: { labelSelector: LABEL } }, { timeoutMs: 30_000 }).catch(() => ({ items: [] }));
  for (const sb of left.items) await cri.runtime.removePodSandbox({ podSandboxId: sb.id }, { timeoutMs: 30_000 }).catch(() => {});
  cri.close();
  await rt.stop();
  await rm(logDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
