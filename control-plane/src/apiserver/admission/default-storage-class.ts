/**
 * The DefaultStorageClass admission plugin (plugin/pkg/admission/storage/storageclass/setdefault):
 * a new PersistentVolumeClaim without `storageClassName` gets the default StorageClass (the one
 * annotated `storageclass.kubernetes.io/is-default-class: "true"`, the newest when several are).
 * An explicit `""` asks for no class and is left alone. Mutating.
 */
import { ANN_DEFAULT_STORAGE_CLASS } from '@nodelet/api';
import type { Json } from '../object.js';
import { isPlainObject } from '../object.js';
import { MATCH_ALL } from '../filter.js';
import type { AdmissionPlugin } from './types.js';

export const defaultStorageClassAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.operation !== 'CREATE' || r.subresource || r.def.group !== '' || r.def.plural !== 'persistentvolumeclaims' || !r.object) return;
  const spec = r.object.spec;
  if (!isPlainObject(spec) || spec.storageClassName !== undefined) return;
  const classes = ctx.resource('storage.k8s.io', 'v1', 'storageclasses');
  if (!classes) return;
  const defaults = (await classes.registry.list({ filter: MATCH_ALL })).items
    .filter((sc) => ['true', 'True'].includes(sc.metadata.annotations?.[ANN_DEFAULT_STORAGE_CLASS] ?? ''))
    .sort((a, b) => Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || String(a.metadata.name).localeCompare(String(b.metadata.name)));
  if (defaults[0]) (spec as Json).storageClassName = defaults[0].metadata.name;
};
