/**
 * Schemas of core/v1 volume sources. The sources nodelet mounts (and the common CSI/NFS ones) are
 * described field by field; the in-tree cloud and storage plugins are open objects: accepted as
 * written, not described here.
 */
import { bool, definitions, int32, int64, listOf, obj, openObject, ref, str, strMap, type JsonSchema } from './dsl.js';

/** The in-tree plugins nodelet does not mount: [field, definition]. */
const IN_TREE: ReadonlyArray<[field: string, def: string, what: string]> = [
  ['awsElasticBlockStore', 'AWSElasticBlockStoreVolumeSource', 'An AWS EBS disk (deprecated in-tree plugin).'],
  ['gcePersistentDisk', 'GCEPersistentDiskVolumeSource', 'A GCE persistent disk (deprecated in-tree plugin).'],
  ['gitRepo', 'GitRepoVolumeSource', 'A git repository cloned into an empty directory (deprecated).'],
  ['iscsi', 'ISCSIVolumeSource', 'An iSCSI disk.'],
  ['glusterfs', 'GlusterfsVolumeSource', 'A GlusterFS mount (removed upstream).'],
  ['rbd', 'RBDVolumeSource', 'A Ceph RBD image (deprecated).'],
  ['flexVolume', 'FlexVolumeSource', 'A FlexVolume driver (deprecated).'],
  ['cinder', 'CinderVolumeSource', 'An OpenStack Cinder volume (deprecated).'],
  ['cephfs', 'CephFSVolumeSource', 'A CephFS mount (deprecated).'],
  ['flocker', 'FlockerVolumeSource', 'A Flocker dataset (deprecated).'],
  ['fc', 'FCVolumeSource', 'A Fibre Channel disk.'],
  ['azureFile', 'AzureFileVolumeSource', 'An Azure File share (deprecated in-tree plugin).'],
  ['azureDisk', 'AzureDiskVolumeSource', 'An Azure data disk (deprecated in-tree plugin).'],
  ['vsphereVolume', 'VsphereVirtualDiskVolumeSource', 'A vSphere disk (deprecated in-tree plugin).'],
  ['quobyte', 'QuobyteVolumeSource', 'A Quobyte mount (deprecated).'],
  ['photonPersistentDisk', 'PhotonPersistentDiskVolumeSource', 'A Photon controller disk (deprecated).'],
  ['portworxVolume', 'PortworxVolumeSource', 'A Portworx volume (deprecated in-tree plugin).'],
  ['scaleIO', 'ScaleIOVolumeSource', 'A ScaleIO volume (deprecated).'],
  ['storageos', 'StorageOSVolumeSource', 'A StorageOS volume (deprecated).'],
];

/** The in-tree plugins' fields of a Volume (`pv`: the PersistentVolume variants where upstream has them). */
export function inTreeSourceFields(pv: boolean): Record<string, JsonSchema> {
  const pvVariant: Record<string, string> = {
    ISCSIVolumeSource: 'ISCSIPersistentVolumeSource', GlusterfsVolumeSource: 'GlusterfsPersistentVolumeSource', RBDVolumeSource: 'RBDPersistentVolumeSource',
    FlexVolumeSource: 'FlexPersistentVolumeSource', CinderVolumeSource: 'CinderPersistentVolumeSource', CephFSVolumeSource: 'CephFSPersistentVolumeSource',
    AzureFileVolumeSource: 'AzureFilePersistentVolumeSource', ScaleIOVolumeSource: 'ScaleIOPersistentVolumeSource', StorageOSVolumeSource: 'StorageOSPersistentVolumeSource',
  };
  const out: Record<string, JsonSchema> = {};
  for (const [field, def, what] of IN_TREE) {
    if (pv && field === 'gitRepo') continue;
    out[field] = ref(`core.${pv ? (pvVariant[def] ?? def) : def}`, what);
  }
  return out;
}

const inTreeDefinitions = (): Record<string, JsonSchema> => {
  const out: Record<string, JsonSchema> = {};
  const names = [
    ...IN_TREE.map(([, def]) => def),
    'ISCSIPersistentVolumeSource', 'GlusterfsPersistentVolumeSource', 'RBDPersistentVolumeSource', 'FlexPersistentVolumeSource', 'CinderPersistentVolumeSource',
    'CephFSPersistentVolumeSource', 'AzureFilePersistentVolumeSource', 'ScaleIOPersistentVolumeSource', 'StorageOSPersistentVolumeSource',
  ];
  for (const name of names) out[name] = openObject('An in-tree volume plugin nodelet does not mount; its fields are stored as given.');
  return out;
};

const items = (what: string): JsonSchema => listOf('core.KeyToPath', `Keys of the ${what} to project, each to a path; all keys when empty.`, { type: 'atomic' });
const defaultMode = int32('Mode bits of the files (0–0777; octal in YAML), default 0644.');

export const CORE_VOLUME_SCHEMAS: Record<string, JsonSchema> = definitions('core', {
  Volume: obj('A named volume of a pod; exactly one source.', {
    name: str('Name of the volume, a DNS label unique in the pod.'),
    hostPath: ref('core.HostPathVolumeSource', 'A file or directory of the node.'),
    emptyDir: ref('core.EmptyDirVolumeSource', 'An empty directory that lives as long as the pod.'),
    secret: ref('core.SecretVolumeSource', 'The keys of a Secret as files.'),
    configMap: ref('core.ConfigMapVolumeSource', 'The keys of a ConfigMap as files.'),
    downwardAPI: ref('core.DownwardAPIVolumeSource', 'Fields of the pod as files.'),
    projected: ref('core.ProjectedVolumeSource', 'Several sources (secrets, config maps, downward API, service account tokens) in one directory.'),
    persistentVolumeClaim: ref('core.PersistentVolumeClaimVolumeSource', 'A PersistentVolumeClaim in the pod’s namespace.'),
    ephemeral: ref('core.EphemeralVolumeSource', 'A claim created for this pod and deleted with it.'),
    csi: ref('core.CSIVolumeSource', 'An inline volume of a CSI driver.'),
    nfs: ref('core.NFSVolumeSource', 'An NFS export.'),
    image: ref('core.ImageVolumeSource', 'The content of an OCI image or artifact, read-only.'),
    ...inTreeSourceFields(false),
  }, { required: ['name'] }),
  HostPathVolumeSource: obj('A path on the node.', {
    path: str('Path on the node; a symlink is followed.'),
    type: str('What must be there: `""` (no check), `DirectoryOrCreate`, `Directory`, `FileOrCreate`, `File`, `Socket`, `CharDevice` or `BlockDevice`.', {
      enum: ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'],
    }),
  }, { required: ['path'] }),
  EmptyDirVolumeSource: obj('An empty directory.', {
    medium: str('`""` (the node’s disk) or `Memory` (tmpfs).'),
    sizeLimit: ref('resource.Quantity', 'Most the volume may hold.'),
  }),
  SecretVolumeSource: obj('A Secret as files.', {
    secretName: str('Name of the Secret in the pod’s namespace.'),
    items: items('Secret'),
    defaultMode,
    optional: bool('A missing Secret or key is not an error.'),
  }),
  ConfigMapVolumeSource: obj('A ConfigMap as files.', {
    name: str('Name of the ConfigMap in the pod’s namespace.'),
    items: items('ConfigMap'),
    defaultMode,
    optional: bool('A missing ConfigMap or key is not an error.'),
  }),
  KeyToPath: obj('A key projected to a file.', {
    key: str('The key.'),
    path: str('Relative file path; may not contain `..` or start with it.'),
    mode: int32('Mode bits of this file (0–0777).'),
  }, { required: ['key', 'path'] }),
  DownwardAPIVolumeSource: obj('Pod fields as files.', {
    items: listOf('core.DownwardAPIVolumeFile', 'The files.', { type: 'atomic' }),
    defaultMode,
  }),
  DownwardAPIVolumeFile: obj('A file holding a pod field or a container resource.', {
    path: str('Relative file path.'),
    fieldRef: ref('core.ObjectFieldSelector', 'A pod field: metadata.name, namespace, uid, labels, annotations.'),
    resourceFieldRef: ref('core.ResourceFieldSelector', 'A container’s limit or request.'),
    mode: int32('Mode bits of this file (0–0777).'),
  }, { required: ['path'] }),
  ProjectedVolumeSource: obj('Several sources in one directory.', {
    sources: listOf('core.VolumeProjection', 'The sources.', { type: 'atomic' }),
    defaultMode,
  }),
  VolumeProjection: obj('One source of a projected volume.', {
    secret: ref('core.SecretProjection', 'Keys of a Secret.'),
    downwardAPI: ref('core.DownwardAPIProjection', 'Pod fields.'),
    configMap: ref('core.ConfigMapProjection', 'Keys of a ConfigMap.'),
    serviceAccountToken: ref('core.ServiceAccountTokenProjection', 'A token of the pod’s service account, refreshed before it expires.'),
    clusterTrustBundle: ref('core.ClusterTrustBundleProjection', 'Certificates of ClusterTrustBundles.'),
  }),
  SecretProjection: obj('Keys of a Secret in a projected volume.', { name: str('Name of the Secret.'), items: items('Secret'), optional: bool('A missing Secret or key is not an error.') }),
  ConfigMapProjection: obj('Keys of a ConfigMap in a projected volume.', { name: str('Name of the ConfigMap.'), items: items('ConfigMap'), optional: bool('A missing ConfigMap or key is not an error.') }),
  DownwardAPIProjection: obj('Pod fields in a projected volume.', { items: listOf('core.DownwardAPIVolumeFile', 'The files.', { type: 'atomic' }) }),
  ServiceAccountTokenProjection: obj('A bound service-account token file.', {
    audience: str('Audience of the token (default the API server’s).'),
    expirationSeconds: int64('Requested lifetime (default 1 hour, at least 10 minutes).'),
    path: str('Relative file path.'),
  }, { required: ['path'] }),
  ClusterTrustBundleProjection: obj('Certificates of ClusterTrustBundles as one file.', {
    name: str('One bundle by name.'),
    signerName: str('Bundles of this signer.'),
    labelSelector: ref('meta.LabelSelector', 'Bundles of the signer with these labels.'),
    optional: bool('No matching bundle is not an error.'),
    path: str('Relative file path.'),
  }, { required: ['path'] }),
  PersistentVolumeClaimVolumeSource: obj('A claim used as a volume.', {
    claimName: str('Name of the claim in the pod’s namespace.'),
    readOnly: bool('Mount read-only.'),
  }, { required: ['claimName'] }),
  EphemeralVolumeSource: obj('A per-pod claim.', {
    volumeClaimTemplate: ref('core.PersistentVolumeClaimTemplate', 'Template of the claim (named `<pod>-<volume>`).'),
  }),
  PersistentVolumeClaimTemplate: obj('Template of a claim.', {
    metadata: ref('meta.ObjectMeta', 'Labels and annotations of the claim.'),
    spec: ref('core.PersistentVolumeClaimSpec', 'The claim’s spec.'),
  }, { required: ['spec'] }),
  CSIVolumeSource: obj('An inline CSI volume.', {
    driver: str('Name of the CSI driver.'),
    readOnly: bool('Mount read-only.'),
    fsType: str('Filesystem type.'),
    volumeAttributes: strMap('Driver-specific attributes.'),
    nodePublishSecretRef: ref('core.LocalObjectReference', 'Secret passed to the driver’s NodePublishVolume.'),
  }, { required: ['driver'] }),
  NFSVolumeSource: obj('An NFS export.', {
    server: str('NFS server.'),
    path: str('Exported path.'),
    readOnly: bool('Mount read-only.'),
  }, { required: ['server', 'path'] }),
  ImageVolumeSource: obj('An OCI image as a volume.', {
    reference: str('Image or artifact reference.'),
    pullPolicy: str('`Always`, `Never` or `IfNotPresent`.', { enum: ['Always', 'IfNotPresent', 'Never'] }),
  }),
  LocalVolumeSource: obj('A directory or disk of one node (PersistentVolumes only).', {
    path: str('Path on the node.'),
    fsType: str('Filesystem type, for block devices.'),
  }, { required: ['path'] }),
  ...inTreeDefinitions(),
});
