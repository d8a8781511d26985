/** PersistentVolume, PersistentVolumeClaim and StorageClass validation (core and storage validation). */
import { invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { parseQuantity } from '../quantity.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];

function accessModeErrors(modes: unknown, field: string): FieldError[] {
  if (!Array.isArray(modes) || modes.length === 0) return [required(field, 'Required value: at least 1 access mode is required')];
  return modes.flatMap((m) => (ACCESS_MODES.includes(m as string) ? [] : [notSupported(field, m, ACCESS_MODES)]));
}

function storageQuantityErrors(q: unknown, field: string): FieldError[] {
  if (q === undefined || q === null) return [required(field)];
  try {
    if (parseQuantity(String(q)) <= 0) return [invalidValue(field, q, 'must be greater than zero')];
  } catch {
    return [invalidValue(field, q, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")];
  }
  return [];
}

export function validatePersistentVolumeClaimSpec(spec: unknown, path = 'spec'): FieldError[] {
  if (!isObj(spec)) return [required(path)];
  const errs = accessModeErrors(spec.accessModes, `${path}.accessModes`);
  const requests = (spec.resources as Obj | undefined)?.requests as Obj | undefined;
  errs.push(...storageQuantityErrors(requests?.storage, `${path}.resources[storage]`));
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(spec.volumeMode as string)) errs.push(notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  return errs;
}

const PV_SOURCES = ['hostPath', 'local', 'nfs', 'csi', 'iscsi', 'fc', 'rbd', 'cephfs', 'cinder', 'glusterfs', 'azureFile', 'azureDisk', 'gcePersistentDisk', 'awsElasticBlockStore', 'flexVolume', 'flocker', 'vsphereVolume', 'quobyte', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos'];

export function validatePersistentVolume(spec: unknown, path = 'spec'): FieldError[] {
  if (!isObj(spec)) return [required(path)];
  const errs = accessModeErrors(spec.accessModes, `${path}.accessModes`);
  errs.push(...storageQuantityErrors((spec.capacity as Obj | undefined)?.storage, `${path}.capacity`));
  const sources = PV_SOURCES.filter((s) => spec[s] !== undefined && spec[s] !== null);
  if (sources.length === 0) errs.push(required(path, 'Required value: must specify a volume type'));
  if (sources.length > 1) errs.push({ type: 'FieldValueForbidden', field: `${path}.${sources[1]}`, message: 'Forbidden: may not specify more than 1 volume type' });
  const hp = spec.hostPath as Obj | undefined;
  if (hp && (typeof hp.path !== 'string' || hp.path === '')) errs.push(required(`${path}.hostPath.path`));
  if (hp && typeof hp.path === 'string' && hp.path.split('/').includes('..')) errs.push(invalidValue(`${path}.hostPath.path`, hp.path, "must not contain '..'"));
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy !== undefined && !['Delete', 'Recycle', 'Retain'].includes(policy as string)) errs.push(notSupported(`${path}.persistentVolumeReclaimPolicy`, policy, ['Delete', 'Recycle', 'Retain']));
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(spec.volumeMode as string)) errs.push(notSupported(`${path}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  return errs;
}

export function validateStorageClass(sc: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof sc.provisioner !== 'string' || sc.provisioner === '') errs.push(required('provisioner'));
  if (sc.reclaimPolicy !== undefined && !['Delete', 'Retain'].includes(sc.reclaimPolicy as string)) errs.push(notSupported('reclaimPolicy', sc.reclaimPolicy, ['Delete', 'Retain']));
  const mode = sc.volumeBindingMode;
  if (mode !== undefined && !['Immediate', 'WaitForFirstConsumer'].includes(mode as string)) errs.push(notSupported('volumeBindingMode', mode, ['Immediate', 'WaitForFirstConsumer']));
  return errs;
}
