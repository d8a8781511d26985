// The PLEG's own JavaScript per relist with N idle pods: the agent's Pleg over an in-process
// runtime that answers the two listings with N running pods (one sandbox, one container each),
// as containerd does on an idle node. CPU time from process.cpuUsage, so the figure does not
// depend on how loaded the machine is (wall time would); the listings' own cost (a structured
// clone standing in for the gRPC decode) is measured alone and subtracted.
//
//   node --conditions=source --import tsx bench/pleg-relist.ts [--pods 30] [--relists 5000]
import { parseArgs } from 'node:util';
import { noopLogger, systemClock } from '@nodelet/base';
import type { CriContainer, CriSandbox, RuntimeService } from '../agent/src/kubecontainer/cri.js';
import { CONTAINER_NAME, MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID } from '../agent/src/kubecontainer/labels.js';
import { Pleg } from '../agent/src/pleg/pleg.js';

const { values: args } = parseArgs({ options: { pods: { type: 'string', default: '30' }, relists: { type: 'string', default: '5000' } } });
const PODS = Number(args.pods);
const RELISTS = Number(args.relists);
if (!Number.isInteger(PODS) || PODS < 1 || !Number.isInteger(RELISTS) || RELISTS < 1) throw new Error('--pods and --relists take positive integers');

const sandboxes: CriSandbox[] = [];
const containers: CriContainer[] = [];
for (let i = 0; i < PODS; i++) {
  const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const sandboxId = `s${i}`.padEnd(64, '0');
  const labels = { [MANAGED_BY]: 'true', [POD_UID]: uid, [POD_NAME]: `pod-${i}`, [POD_NAMESPACE]: 'default', app: 'idle' };
  sandboxes.push({ id: sandboxId, state: 'SANDBOX_READY', labels, annotations: {}, createdAt: '1733300000000000000', runtimeHandler: '', metadata: { name: `pod-${i}`, uid, namespace: 'default', attempt: 0 } } as unknown as CriSandbox);
  containers.push({
    id: `c${i}`.padEnd(64, '0'), podSandboxId: sandboxId, state: 'CONTAINER_RUNNING', labels: { ...labels, [CONTAINER_NAME]: 'main' },
    annotations: { 'io.kubernetes.container.hash': '1a2b3c', 'io.kubernetes.container.restartCount': '0' },
    createdAt: '1733300000000000001', imageRef: `sha256:${'1'.repeat(64)}`, image: { image: 'docker.io/library/busybox:latest' }, metadata: { name: 'main', attempt: 0 },
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

const pleg = new Pleg({ runtime, clock: systemClock, log: noopLogger, onPodChanged: () => undefined });
const stop = new AbortController();
for (let i = 0; i < 200; i++) await pleg.relist(stop.signal); // warm-up: statuses cached, code optimised

const cpuUs = (since: NodeJS.CpuUsage): number => { const d = process.cpuUsage(since); return d.user + d.system; };
let t = process.cpuUsage();
for (let i = 0; i < RELISTS; i++) await pleg.relist(stop.signal);
const relistUs = cpuUs(t) / RELISTS;
t = process.cpuUsage();
for (let i = 0; i < RELISTS; i++) await Promise.all([listSandboxes(), listContainers()]);
const listingUs = cpuUs(t) / RELISTS;
console.log(`pleg relist, ${PODS} idle pods, ${RELISTS} relists: ${relistUs.toFixed(0)} us CPU each, of which the listings ${listingUs.toFixed(0)} us; PLEG's own ${(relistUs - listingUs).toFixed(0)} us (${((relistUs - listingUs) * 60 / 1000).toFixed(1)} ms CPU a minute at one relist a second)`);
