/**
 * The volume sources this node knows, in one table: for each, the directory kubelet's plugin
 * would use under `<root-dir>/pods/<uid>/volumes/` (none for hostPath, mounted where it is), what
 * is prepared before the sandbox, whether containers always see it read-only, and what is
 * cleaned. Every other source of the API (csi, nfs, iscsi, ephemeral, image, cephfs, rbd, …) is
 * refused with a FailedMount event, never skipped: a skipped volume would leave its mount path
 * in the container's own root filesystem, where data would silently be lost.
 *
 *   source                  plugin dir                       prepared                      read-only  cleaned
 *   emptyDir                kubernetes.io~empty-dir          dir 0777 (tmpfs for Memory)   no         unmount, rm
 *   configMap               kubernetes.io~configmap          atomic-writer files           yes        rm
 *   secret                  kubernetes.io~secret             tmpfs + atomic-writer files   yes        unmount, rm
 *   projected               kubernetes.io~projected          tmpfs + atomic-writer files   yes        unmount, rm
 *   downwardAPI             kubernetes.io~downward-api       atomic-writer files           yes        rm
 *   persistentVolumeClaim   kubernetes.io~local-volume       bind mount of the PV's path   claim's    unmount, rm
 *   hostPath                —                                `type` checked (or created)   no         nothing
 */
import type { Volume } from '@nodelet/api/agent';

export type SupportedVolumeSource = 'emptyDir' | 'configMap' | 'secret' | 'projected' | 'downwardAPI' | 'persistentVolumeClaim' | 'hostPath';

export interface VolumeKind {
  /** The directory under `volumes/`; undefined: the volume is not materialised in the pod directory. */
  pluginDir?: string;
  /** Containers get it read-only whatever the mount asks (CVE-2017-1002102 for the writer's files). */
  alwaysReadOnly: boolean;
}

export const VOLUME_KINDS: Readonly<Record<SupportedVolumeSource, VolumeKind>> = {
  emptyDir: { pluginDir: 'kubernetes.io~empty-dir', alwaysReadOnly: false },
  configMap: { pluginDir: 'kubernetes.io~configmap', alwaysReadOnly: true },
  secret: { pluginDir: 'kubernetes.io~secret', alwaysReadOnly: true },
  projected: { pluginDir: 'kubernetes.io~projected', alwaysReadOnly: true },
  downwardAPI: { pluginDir: 'kubernetes.io~downward-api', alwaysReadOnly: true },
  persistentVolumeClaim: { pluginDir: 'kubernetes.io~local-volume', alwaysReadOnly: false },
  hostPath: { alwaysReadOnly: false },
};

/** The source field a volume sets (`csi`, `emptyDir`, …); undefined when it sets none. */
export function volumeSourceOf(v: Volume): string | undefined {
  return Object.keys(v).find((k) => k !== 'name' && (v as unknown as Record<string, unknown>)[k] != null);
}

/** The table's entry for the volume's source, or undefined when this node cannot provide it. */
export function volumeKindOf(v: Volume): (VolumeKind & { source: SupportedVolumeSource }) | undefined {
  const source = volumeSourceOf(v);
  if (source === undefined || !Object.hasOwn(VOLUME_KINDS, source)) return undefined;
  return { source: source as SupportedVolumeSource, ...VOLUME_KINDS[source as SupportedVolumeSource] };
}

/** Why the node refuses the pod's volumes (one line per volume it cannot provide); empty when it can provide all. */
export function unsupportedVolumeProblems(volumes: readonly Volume[] | undefined): string[] {
  const out: string[] = [];
  for (const v of volumes ?? []) {
    if (volumeKindOf(v)) continue;
    const source = volumeSourceOf(v);
    out.push(source === undefined ? `volume "${v.name}" has no volume source` : `volume "${v.name}": ${source} volumes are not supported on this node`);
  }
  return out;
}
