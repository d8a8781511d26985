/** Table printers of PersistentVolumes, PersistentVolumeClaims and StorageClasses (kubectl's columns). */
import { col, get, kindTable } from './format.js';

const ABBREVIATIONS: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };

/** helper.GetAccessModesAsString: each mode once, in a fixed order. */
export function accessModesColumn(modes: unknown): string {
  const set = new Set(Array.isArray(modes) ? (modes as string[]) : []);
  return ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].filter((m) => set.has(m)).map((m) => ABBREVIATIONS[m]).join(',');
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const PERSISTENTVOLUME_TABLE = kindTable({
  columns: [
    col('Capacity', 'capacity is the description of the persistent volume\'s resources and capacity.'),
    col('Access Modes', 'accessModes contains all ways the volume can be mounted.'),
    col('Reclaim Policy', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.'),
    col('Status', 'phase indicates if a volume is available, bound to a claim, or released by a claim.'),
    col('Claim', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
    col('StorageClass', 'storageClassName is the name of StorageClass to which this persistent volume belongs.'),
    col('VolumeAttributesClass', 'Name of VolumeAttributesClass to which this persistent volume belongs.'),
    col('Reason', 'reason is a brief CamelCase string that describes any failure.'),
  ],
  afterAge: [col('VolumeMode', 'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.', 1)],
  cells: (o) => {
    const claim = get(o, 'spec.claimRef') as { namespace?: string; name?: string } | undefined;
    return [
      str(get(o, 'spec.capacity.storage')),
      accessModesColumn(get(o, 'spec.accessModes')),
      str(get(o, 'spec.persistentVolumeReclaimPolicy')),
      str(get(o, 'status.phase')),
      claim?.name ? `${claim.namespace}/${claim.name}` : '',
      str(get(o, 'spec.storageClassName')),
      str(get(o, 'spec.volumeAttributesClassName')) || '<unset>',
      str(get(o, 'status.reason')),
      str(get(o, 'spec.volumeMode')) || '<unset>',
    ];
  },
});

export const PERSISTENTVOLUMECLAIM_TABLE = kindTable({
  columns: [
    col('Status', 'phase represents the current phase of PersistentVolumeClaim.'),
    col('Volume', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
    col('Capacity', 'capacity represents the actual resources of the underlying volume.'),
    col('Access Modes', 'accessModes contains the desired access modes the volume should have.'),
    col('StorageClass', 'storageClassName is the name of the StorageClass required by the claim.'),
    col('VolumeAttributesClass', 'volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.'),
  ],
  afterAge: [col('VolumeMode', 'volumeMode defines what type of volume is required by the claim.', 1)],
  cells: (o) => {
    const bound = get(o, 'status.phase') === 'Bound';
    return [
      str(get(o, 'status.phase')),
      str(get(o, 'spec.volumeName')),
      bound ? str(get(o, 'status.capacity.storage')) : '',
      bound ? accessModesColumn(get(o, 'status.accessModes')) : '',
      str(get(o, 'spec.storageClassName')),
      str(get(o, 'spec.volumeAttributesClassName')) || '<unset>',
      str(get(o, 'spec.volumeMode')) || '<unset>',
    ];
  },
});

export const STORAGECLASS_TABLE = kindTable({
  columns: [
    col('Provisioner', 'provisioner indicates the type of the provisioner.'),
    col('ReclaimPolicy', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.'),
    col('VolumeBindingMode', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.'),
    col('AllowVolumeExpansion', 'allowVolumeExpansion shows whether the storage class allow volume expand.'),
  ],
  name: (o) => `${o.metadata.name}${['true', 'True'].includes(o.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] ?? '') ? ' (default)' : ''}`,
  cells: (o) => [str(o.provisioner), str(o.reclaimPolicy) || 'Delete', str(o.volumeBindingMode) || 'Immediate', o.allowVolumeExpansion === true ? 'true' : 'false'],
});
