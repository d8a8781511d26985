/**
 * The network namespace path of a sandbox, from verbose PodSandboxStatus `info`.
 *
 * containerd 1.6 and CRI-O put a JSON document under info["info"]:
 *   containerd: { pid, runtimeSpec: { linux: { namespaces: [{ type: "network", path }] } }, … }
 *   containerd 2.x also: { sandboxMetadata: { NetNSPath } }
 *   CRI-O:      { pid?, runtimeSpec } (pid absent when the infra container is spoofed)
 * The spec's network namespace path is the pinned netns file (/var/run/netns/cni-<uuid> for
 * containerd, <namespaces_dir>/netns/<id> for CRI-O). /proc/<pid>/ns/net is the last resort: it is
 * only valid while the sandbox process lives.
 */
import type { PodSandboxStatusResponse__Output } from '@nodelet/proto';

interface SandboxInfoDoc {
  pid?: number;
  runtimeSpec?: { linux?: { namespaces?: { type?: string; path?: string }[] } };
  sandboxMetadata?: { NetNSPath?: string };
}

/**
 * Returns the netns path, or undefined for a host-network sandbox, a non-verbose status, or info
 * that is not JSON. Accepts the whole status response or just its `info` map.
 */
export function netnsPathFromSandboxInfo(
  statusOrInfo: Pick<PodSandboxStatusResponse__Output, 'info'> | Record<string, string> | undefined,
): string | undefined {
  if (!statusOrInfo) return undefined;
  const info = (typeof (statusOrInfo as { info?: unknown }).info === 'object'
    ? (statusOrInfo as { info: Record<string, string> }).info
    : statusOrInfo) as Record<string, string>;
  const raw = info['info'];
  if (!raw) return undefined;
  let doc: SandboxInfoDoc;
  try {
    doc = JSON.parse(raw) as SandboxInfoDoc;
  } catch {
    return undefined;
  }
  const fromSpec = doc.runtimeSpec?.linux?.namespaces?.find((n) => n.type === 'network')?.path;
  if (fromSpec) return fromSpec;
  const fromMetadata = doc.sandboxMetadata?.NetNSPath;
  if (fromMetadata) return fromMetadata;
  // A network namespace entry without a path means "new namespace" for runc, i.e. the sandbox
  // process owns it; no entry at all means the host network: nothing to return then.
  const hasNetworkEntry = doc.runtimeSpec?.linux?.namespaces?.some((n) => n.type === 'network') ?? false;
  if (doc.pid && doc.pid > 0 && hasNetworkEntry) return `/proc/${doc.pid}/ns/net`;
  if (doc.pid && doc.pid > 0 && !doc.runtimeSpec) return `/proc/${doc.pid}/ns/net`;
  return undefined;
}
