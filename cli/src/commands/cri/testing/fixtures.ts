// Replies used by the golden tests, shaped like containerd 1.6's (see tables.test.ts).
import type { Container__Output, ContainerStats__Output, Image__Output, PodSandbox__Output, PodSandboxStats__Output } from '@nodelet/cri-client';

/** 2026-12-02T12:00:00Z, the "now" of every golden table. */
export const NOW_MS = Date.UTC(2026, 11, 2, 12, 0, 0);
const ns = (msAgo: number): string => (BigInt(NOW_MS - msAgo) * 1_000_000n).toString();

const SB1 = 'c186705e83d18fea900ef876510fdbf17444b9799755aa8d57b385c39377b2c5';
const SB2 = '5b0e0f5c0b9d4d1b8e55d0b4fa1f1c1e4d1e2b9a7c3a0e0d9c8b7a6f5e4d3c2b';
const IMG = 'sha256:d197a536637912185c775efec4ceff03c3ba0cd6eec95871104a18b064390498';

const labels = (pod: string, ns_: string, ctr?: string): Record<string, string> => ({
  'io.kubernetes.pod.name': pod,
  'io.kubernetes.pod.namespace': ns_,
  ...(ctr ? { 'io.kubernetes.container.name': ctr } : {}),
});

export const PODS: PodSandbox__Output[] = [
  { id: SB2, metadata: { name: 'old-pod', uid: 'u2', namespace: 'kube-system', attempt: 2 }, state: 'SANDBOX_NOTREADY', createdAt: ns(3 * 3_600_000 + 20 * 60_000), labels: {}, annotations: {}, runtimeHandler: 'runc' },
  { id: SB1, metadata: { name: 'web-7d4b9c', uid: 'u1', namespace: 'default', attempt: 0 }, state: 'SANDBOX_READY', createdAt: ns(75_000), labels: {}, annotations: {}, runtimeHandler: '' },
];

export const CONTAINERS: Container__Output[] = [
  {
    id: 'f00dfeed0123456789abcdef0123456789abcdef0123456789abcdef01234567',
    podSandboxId: SB2,
    metadata: { name: 'sidecar', attempt: 3 },
    image: { image: IMG, annotations: {}, userSpecifiedImage: '', runtimeHandler: '' },
    imageRef: IMG,
    state: 'CONTAINER_EXITED',
    createdAt: ns(2 * 86_400_000 + 5 * 3_600_000),
    labels: {},
    annotations: {},
  },
  {
    id: '7f31189f1b9e312bba58e1141160d6bff0ba16d720f8806e4098e41068c03d86',
    podSandboxId: SB1,
    metadata: { name: 'nginx', attempt: 0 },
    image: { image: '127.0.0.1:5000/busybox:latest', annotations: {}, userSpecifiedImage: '', runtimeHandler: '' },
    imageRef: IMG,
    state: 'CONTAINER_RUNNING',
    createdAt: ns(42_000),
    labels: labels('web-7d4b9c', 'default', 'nginx'),
    annotations: {},
  },
];

const image = (id: string, tags: string[], digests: string[], size: number, pinned = false): Image__Output => ({ id, repoTags: tags, repoDigests: digests, size: String(size), uid: null, username: '', spec: null, pinned });

export const IMAGES: Image__Output[] = [
  image(IMG, ['127.0.0.1:5000/busybox:latest', '127.0.0.1:5000/busybox:1.36'], ['127.0.0.1:5000/busybox@sha256:fa361c711052a7aa9e956930c714e47093f8d9aee06ac1e3b19926a21fac162f'], 2_130_686),
  image('sha256:a34a0db1f2cb618f1d821bb61b3b690e0fd0cffe641ef6a4de6b0cdd10f5ecab', ['127.0.0.1:5000/pause:3.9'], ['127.0.0.1:5000/pause@sha256:10e2736414c66b4c4a8a6cbf5e1f6ab79e5f1a0b5a9f9c4a4d3e2b1a09f8e7d6'], 686_999, true),
  image('sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', [], ['registry.example/tools@sha256:99aa88bb77cc66dd55ee44ff33001122334455667788990011223344556677ff'], 1_234_567_890),
];

const u = (v: number | string) => ({ value: String(v) });
const cstats = (id: string, name: string, ts: number, cpuNs: number, mem: number, disk: number, inodes: number, swap: number): ContainerStats__Output => ({
  attributes: { id, metadata: { name, attempt: 0 }, labels: {}, annotations: {} },
  cpu: { timestamp: String(ts), usageCoreNanoSeconds: u(cpuNs), usageNanoCores: u(0) },
  memory: { timestamp: String(ts), workingSetBytes: u(mem), availableBytes: null, usageBytes: null, rssBytes: null, pageFaults: null, majorPageFaults: null },
  writableLayer: { timestamp: String(ts), fsId: { mountpoint: '/x' }, usedBytes: u(disk), inodesUsed: u(inodes) },
  swap: { timestamp: String(ts), swapAvailableBytes: u(0), swapUsageBytes: u(swap) },
});

const T0 = 1_796_000_000_000_000_000;
export const STATS_BEFORE: ContainerStats__Output[] = [
  cstats(CONTAINERS[1]!.id, 'nginx', T0, 5_000_000_000, 462_848, 20_480, 8, 0),
  cstats(CONTAINERS[0]!.id, 'sidecar', T0, 0, 0, 4_096, 3, 0),
];
export const STATS_AFTER: ContainerStats__Output[] = [
  cstats(CONTAINERS[1]!.id, 'nginx', T0 + 1_000_000_000, 5_012_345_678, 462_848, 20_480, 8, 0),
  cstats(CONTAINERS[0]!.id, 'sidecar', T0 + 1_000_000_000, 0, 0, 4_096, 3, 0),
  cstats('aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999', 'new', T0 + 1_000_000_000, 1, 1, 1, 1, 0),
];

const pstats = (id: string, name: string, ts: number, cpuNs: number, mem: number): PodSandboxStats__Output => ({
  attributes: { id, metadata: { name, uid: 'u', namespace: 'default', attempt: 0 }, labels: {}, annotations: {} },
  linux: {
    cpu: { timestamp: String(ts), usageCoreNanoSeconds: u(cpuNs), usageNanoCores: u(0) },
    memory: { timestamp: String(ts), workingSetBytes: u(mem), availableBytes: null, usageBytes: null, rssBytes: null, pageFaults: null, majorPageFaults: null },
    network: null,
    process: null,
    containers: [],
  },
  windows: null,
});
export const POD_STATS_BEFORE = [pstats(SB1, 'web-7d4b9c', T0, 1_000_000_000, 10_485_760)];
export const POD_STATS_AFTER = [pstats(SB1, 'web-7d4b9c', T0 + 2_000_000_000, 1_500_000_000, 10_485_760)];
