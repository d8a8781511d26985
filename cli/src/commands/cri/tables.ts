/**
 * The tables of `nodelet cri ps|pods|images|stats|statsp|version`, column for column as crictl
 * prints them (cri-tools cmd/crictl: container.go, sandbox.go, image.go, container_stats.go,
 * pod_stats.go, version.go). Pure functions of the replies and "now", so golden tests pin them.
 */
import type { Container__Output, ContainerStats__Output, Image__Output, PodSandbox__Output, PodSandboxStats__Output, VersionResponse__Output } from '@nodelet/cri-client';
import { ago, humanSize, humanSizeWithPrecision, tabwrite, truncateId } from './format.js';

const CONTAINER_STATE: Record<string, string> = {
  CONTAINER_CREATED: 'Created',
  CONTAINER_RUNNING: 'Running',
  CONTAINER_EXITED: 'Exited',
  CONTAINER_UNKNOWN: 'Unknown',
};
const POD_STATE: Record<string, string> = { SANDBOX_READY: 'Ready', SANDBOX_NOTREADY: 'NotReady' };

const byCreatedDesc = <T extends { createdAt: string }>(a: T, b: T): number => {
  const d = BigInt(b.createdAt || '0') - BigInt(a.createdAt || '0');
  return d > 0n ? 1 : d < 0n ? -1 : 0;
};

export function versionText(v: VersionResponse__Output): string {
  return `Version:  ${v.version}\nRuntimeName:  ${v.runtimeName}\nRuntimeVersion:  ${v.runtimeVersion}\nRuntimeApiVersion:  ${v.runtimeApiVersion}\n`;
}

export interface TableOptions {
  noTrunc?: boolean;
  nowMs: number;
}

/** A `sha256:<hex>` digest is shown as its first 13 hex characters. */
function shortImage(image: string): string {
  return /^[a-z0-9]+:[0-9a-f]{32,}$/.test(image) ? truncateId(image, `${image.split(':')[0]}:`) : image;
}

export function containersTable(containers: Container__Output[], o: TableOptions & { resolvedImages?: Map<string, string> }): string {
  const rows = [['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD', 'NAMESPACE']];
  for (const c of [...containers].sort(byCreatedDesc)) {
    let image = o.resolvedImages?.get(c.imageRef) ?? c.image?.image ?? '';
    if (!o.noTrunc) image = shortImage(image);
    rows.push([
      o.noTrunc ? c.id : truncateId(c.id),
      image,
      ago(c.createdAt, o.nowMs),
      CONTAINER_STATE[c.state] ?? c.state,
      c.metadata?.name ?? '',
      String(c.metadata?.attempt ?? 0),
      o.noTrunc ? c.podSandboxId : truncateId(c.podSandboxId),
      c.labels['io.kubernetes.pod.name'] ?? 'unknown',
      c.labels['io.kubernetes.pod.namespace'] ?? 'unknown',
    ]);
  }
  return tabwrite(rows);
}

export function podsTable(pods: PodSandbox__Output[], o: TableOptions): string {
  const rows = [['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME']];
  for (const p of [...pods].sort(byCreatedDesc)) {
    rows.push([
      o.noTrunc ? p.id : truncateId(p.id),
      ago(p.createdAt, o.nowMs),
      POD_STATE[p.state] ?? p.state,
      p.metadata?.name ?? '',
      p.metadata?.namespace ?? '',
      String(p.metadata?.attempt ?? 0),
      p.runtimeHandler || '(default)',
    ]);
  }
  return tabwrite(rows);
}

/** `[name, tag]` pairs of an image; untagged images show `<none>`. */
function repoTagPairs(img: Image__Output, nameFromDigest: string): [string, string][] {
  if (img.repoTags.length === 0) return [[nameFromDigest, '<none>']];
  return img.repoTags.map((rt) => {
    const i = rt.lastIndexOf(':');
    return i < 0 || rt.slice(i).includes('/') ? [rt, '<none>'] : [rt.slice(0, i), rt.slice(i + 1)];
  });
}

export function imagesTable(images: Image__Output[], o: { noTrunc?: boolean; digests?: boolean; pinned?: boolean }): string {
  const header = ['IMAGE', 'TAG'];
  if (o.digests) header.push('DIGEST');
  header.push('IMAGE ID', 'SIZE');
  if (o.pinned) header.push('PINNED');
  const rows = [header];
  const sorted = [...images].sort((a, b) => (a.repoTags[0] ?? a.id).localeCompare(b.repoTags[0] ?? b.id));
  for (const img of sorted) {
    const [digestName, digest] = img.repoDigests[0]?.includes('@') ? (img.repoDigests[0].split('@') as [string, string]) : ['<none>', '<none>'];
    const id = o.noTrunc ? img.id : truncateId(img.id, 'sha256:');
    const shownDigest = o.noTrunc ? digest : truncateId(digest, 'sha256:');
    const size = humanSizeWithPrecision(Number(img.size), 3);
    for (const [name, tag] of repoTagPairs(img, digestName)) {
      const row = [name, tag];
      if (o.digests) row.push(shownDigest);
      row.push(id, size);
      if (o.pinned) row.push(String(img.pinned));
      rows.push(row);
    }
  }
  return tabwrite(rows);
}

const num = (v: { value?: string | number } | null | undefined): bigint => BigInt(String(v?.value ?? 0));

/** CPU % between two samples of cumulative core-nanoseconds (crictl: Δusage / Δtimestamp × 100). */
function cpuPercent(cur: { timestamp: string; usageCoreNanoSeconds: { value: string } | null } | null, old: typeof cur): string {
  const usage = num(cur?.usageCoreNanoSeconds);
  if (!cur || !old || usage === 0n) return '0.00';
  const dt = Number(BigInt(cur.timestamp || '0') - BigInt(old.timestamp || '0'));
  if (dt <= 0) return '0.00';
  return ((Number(usage - num(old.usageCoreNanoSeconds)) / dt) * 100).toFixed(2);
}

/** `stats`: rows for containers present in both samples; stopped ones (no CPU, no memory) only with `all`. */
export function containerStatsTable(current: ContainerStats__Output[], previous: ContainerStats__Output[], o: { all?: boolean }): string {
  const old = new Map(previous.map((s) => [s.attributes?.id ?? '', s]));
  const rows = [['CONTAINER', 'NAME', 'CPU %', 'MEM', 'DISK', 'INODES', 'SWAP']];
  for (const s of current) {
    const id = s.attributes?.id ?? '';
    const mem = num(s.memory?.workingSetBytes);
    if (!o.all && num(s.cpu?.usageCoreNanoSeconds) === 0n && mem === 0n) continue;
    const prev = old.get(id);
    if (!prev) continue; // appeared between the samples
    rows.push([
      truncateId(id),
      s.attributes?.metadata?.name ?? '',
      cpuPercent(s.cpu, prev.cpu),
      humanSize(Number(mem)),
      humanSize(Number(num(s.writableLayer?.usedBytes))),
      String(num(s.writableLayer?.inodesUsed)),
      humanSize(Number(num(s.swap?.swapUsageBytes))),
    ]);
  }
  return tabwrite(rows);
}

export function podStatsTable(current: PodSandboxStats__Output[], previous: PodSandboxStats__Output[]): string {
  const old = new Map(previous.map((s) => [s.attributes?.id ?? '', s]));
  const rows = [['POD', 'POD ID', 'CPU %', 'MEM']];
  for (const s of current) {
    const id = s.attributes?.id ?? '';
    const prev = old.get(id);
    if (!prev) continue;
    rows.push([s.attributes?.metadata?.name ?? '', truncateId(id), cpuPercent(s.linux?.cpu ?? null, prev.linux?.cpu ?? null), humanSize(Number(num(s.linux?.memory?.workingSetBytes)))]);
  }
  return tabwrite(rows);
}
