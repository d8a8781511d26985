/**
 * Strategies of PersistentVolumes, PersistentVolumeClaims (core/v1) and StorageClasses
 * (storage.k8s.io/v1): defaults, the initial `Pending` phase, validation and immutability.
 */
import {
  defaultPersistentVolumeClaimSpec,
  defaultPersistentVolumeSpec,
  forbiddenField,
  validatePersistentVolume,
  validatePersistentVolumeClaimSpec,
  validateStorageClass,
  type FieldError,
} from '@nodelet/api';
import { isPlainObject, jsonEqual, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

const PV_SOURCES = ['hostPath', 'local', 'nfs', 'csi'];

export const persistentVolumeStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultPersistentVolumeSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending' };
  },
  validate(obj, old) {
    const errs = validatePersistentVolume(obj.spec);
    if (old) {
      const src = (o: unknown): unknown => PV_SOURCES.map((k) => (o as Json | undefined)?.[k] ?? null);
      if (!jsonEqual(src(obj.spec), src(old.spec))) errs.push(forbiddenField('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'));
    }
    return errs;
  },
};

export const persistentVolumeClaimStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultPersistentVolumeClaimSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending' };
  },
  validate(obj, old) {
    const errs = validatePersistentVolumeClaimSpec(obj.spec);
    if (old && isPlainObject(obj.spec) && isPlainObject(old.spec)) {
      // The binder fills volumeName (and a default class may be filled once); requests may grow.
      const view = (s: Json, before: Json): Json => {
        const { resources: _r, volumeName, storageClassName, ...rest } = s;
        return { ...rest, volumeName: volumeName ?? before.volumeName ?? null, storageClassName: storageClassName ?? before.storageClassName ?? null };
      };
      if (!jsonEqual(view(obj.spec, old.spec), view(old.spec, obj.spec))) {
        errs.push(forbiddenField('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
      }
    }
    return errs;
  },
};

export const storageClassStrategy: Strategy = {
  defaults(obj) {
    obj.reclaimPolicy ??= 'Delete';
    obj.volumeBindingMode ??= 'Immediate';
  },
  validate(obj, old) {
    const errs: FieldError[] = validateStorageClass(obj);
    if (old) {
      for (const f of ['provisioner', 'parameters', 'reclaimPolicy']) {
        if (!jsonEqual(obj[f] ?? null, old[f] ?? null)) errs.push(forbiddenField(f, `updates to ${f} are forbidden.`));
      }
      if (obj.volumeBindingMode !== old.volumeBindingMode) errs.push({ type: 'FieldValueInvalid', field: 'volumeBindingMode', message: `Invalid value: ${JSON.stringify(obj.volumeBindingMode)}: field is immutable` });
    }
    return errs;
  },
};
