/**
 * The volume sources this node knows, in one table that every place handling volumes reads: where
 * each lives (its plugin directory under `<root-dir>/pods/<uid>/volumes/`, or the node path it
 * names), how it is prepared before the sandbox (volume-plugins.ts), whether containers always see
 * it read-only, whether fsGroup owns it, and whether its data counts as the pod's ephemeral storage.
 * Adding a volume type is adding an entry here. Cleanup follows from the entry: a kind with a
 * plugin directory is removed with the pod directory (volumes.ts removePodDir unmounts everything
 * below it first); a kind that names a node path is never touched.
 *
 * Every other source of the API (REFUSED_VOLUME_SOURCES: csi, nfs, iscsi, ephemeral, image,
 * cephfs, rbd, …) is refused with a FailedMount event, never skipped: a skipped volume would leave
 * its mount path in the container's own root filesystem, where data would silently be lost.
 *
 *   source                  plugin dir                       prepared                      read-only  cleaned
 *   emptyDir                kubernetes.io~empty-dir          dir 0777 (tmpfs for Memory)   no         unmount, rm
 *   configMap               kubernetes.io~configmap          atomic-writer files           yes        rm
 *   secret                  kubernetes.io~secret             tmpfs + atomic-writer files   yes        unmount, rm
 *   projected               kubernetes.io~projected          tmpfs + atomic-writer files   yes        unmount, rm
 *   downwardAPI             kubernetes.io~downward-api       atomic-writer files           yes        rm
 *   persistentVolumeClaim   kubernetes.io~local-volume       bind mount of the PV's path   claim's    unmount, rm
 *   hostPath                — (the node path it names)       `type` checked (or created)   no         nothing
 */
import type { Pod, Volume } from '@nodelet/api/agent';
import { checkHostPath } from './host-path.js';
import { mountClaim, prepareKeyed, setUpDownwardAPI, setUpEmptyDir, setUpProjected } from './volume-plugins.js';
import type { VolumeContext } from './volumes.js';

export type SupportedVolumeSource = 'emptyDir' | 'configMap' | 'secret' | 'projected' | 'downwardAPI' | 'persistentVolumeClaim' | 'hostPath';

/**
 * Creates or refreshes one volume before the pod's sandbox, on every sync (idempotent). `dir` is
 * where the volume is on the node ({@link VolumeKind.nodePath}, else its plugin directory).
 */
export type VolumeSetUp = (pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal) => Promise<void>;

export interface VolumeKind {
  /** The directory under `volumes/`; undefined: the volume is not materialised in the pod directory. */
  pluginDir?: string;
  /** For a kind without a plugin directory: the node path containers mount (and that set-up checks). */
  nodePath?(v: Volume): string;
  setUp: VolumeSetUp;
  /**
   * Containers get it read-only whatever the volumeMount asks: the agent's writer's files
   * (CVE-2017-1002102: a container must not plant files the writer would then follow), or a claim
   * the pod mounts read-only.
   */
  readOnly(v: Volume): boolean;
  /** fsGroup owns its files (fs-group.ts); the agent-written kinds get their group from the writer. */
  fsGroup: boolean;
  /** Its data is the pod's ephemeral storage (kubelet counts it into ephemeral-storage; stats/collector.ts). */
  ephemeralStorage: boolean;
}

const always = (): boolean => true;
const never = (): boolean => false;

export const VOLUME_KINDS: Readonly<Record<SupportedVolumeSource, VolumeKind>> = {
  emptyDir: { pluginDir: 'kubernetes.io~empty-dir', setUp: setUpEmptyDir, readOnly: never, fsGroup: true, ephemeralStorage: true },
  configMap: { pluginDir: 'kubernetes.io~configmap', setUp: prepareKeyed, readOnly: always, fsGroup: false, ephemeralStorage: true },
  secret: { pluginDir: 'kubernetes.io~secret', setUp: prepareKeyed, readOnly: always, fsGroup: false, ephemeralStorage: true },
  projected: { pluginDir: 'kubernetes.io~projected', setUp: setUpProjected, readOnly: always, fsGroup: false, ephemeralStorage: true },
  downwardAPI: { pluginDir: 'kubernetes.io~downward-api', setUp: setUpDownwardAPI, readOnly: always, fsGroup: false, ephemeralStorage: true },
  persistentVolumeClaim: {
    pluginDir: 'kubernetes.io~local-volume',
    setUp: mountClaim,
    readOnly: (v) => v.persistentVolumeClaim?.readOnly === true,
    fsGroup: true,
    ephemeralStorage: false,
  },
  hostPath: { nodePath: (v) => v.hostPath!.path, setUp: (_pod, v) => checkHostPath(v.hostPath!), readOnly: never, fsGroup: false, ephemeralStorage: false },
};

/**
 * The volume sources of the API this node refuses (a FailedMount event; the pod waits in
 * ContainerCreating). Listed one by one so that a source the API gains is a decision: the test
 * holds every field of the PodSpec's Volume to this list or VOLUME_KINDS.
 */
export const REFUSED_VOLUME_SOURCES: readonly string[] = [
  // Need a driver, a network filesystem client or an image store this node does not run.
  'csi', 'ephemeral', 'image', 'nfs', 'iscsi', 'fc', 'glusterfs', 'cephfs', 'rbd', 'quobyte', 'flexVolume', 'gitRepo',
  // Cloud and vendor in-tree plugins (removed or deprecated upstream).
  'awsElasticBlockStore', 'gcePersistentDisk', 'azureDisk', 'azureFile', 'cinder', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos', 'flocker',
];

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

/** The plugin directories whose volumes hold the pod's ephemeral data. */
export function ephemeralPluginDirs(): string[] {
  return Object.values(VOLUME_KINDS).flatMap((k) => (k.ephemeralStorage && k.pluginDir ? [k.pluginDir] : []));
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
