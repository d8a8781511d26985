/**
 * Pod volumes and container volumeMounts, as kube-apiserver validates them
 * (k8s.io/kubernetes/pkg/apis/core/validation ValidateVolumes, validateVolumeSource,
 * ValidateVolumeMounts). Field paths and messages are the apiserver's, including its habit of
 * reporting `subPath`, `subPathExpr` and `mountPropagation` problems without the mount's index
 * (`spec.containers[0].volumeMounts.subPath`).
 *
 * The volume name becomes a directory on the node (`<root-dir>/pods/<uid>/volumes/<plugin>/<name>`),
 * and subPath/items paths are joined below it, so these checks are what keeps a pod spec from
 * naming a host path. The agent runs {@link validatePodVolumes} again for every pod it runs.
 */
import { duplicate, forbiddenField, invalidValue, notFound, notSupported, required, type FieldError } from './field-error.js';
import { dns1123LabelProblem } from './names.js';
import { validateLocalDescendingPath, validateLocalNonReservedPath, validatePathNoBacksteps } from './paths.js';

type Obj = Record<string, unknown>;

/** Every volume source of core/v1 VolumeSource, in the order the apiserver checks them. */
const SOURCES = [
  'emptyDir', 'hostPath', 'gitRepo', 'gcePersistentDisk', 'awsElasticBlockStore', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'cinder', 'cephfs', 'quobyte', 'downwardAPI', 'fc', 'flexVolume', 'configMap', 'azureFile',
  'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'storageos', 'projected', 'scaleIO', 'csi', 'ephemeral', 'image',
] as const;
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
const PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'];
const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function validateMode(mode: unknown, field: string): FieldError[] {
  if (mode === undefined || mode === null) return [];
  return Number.isInteger(mode) && (mode as number) >= 0 && (mode as number) <= 0o777 ? [] : [invalidValue(field, mode, FILE_MODE)];
}

function validateKeyToPath(kp: unknown, field: string): FieldError[] {
  if (!isObj(kp)) return [invalidValue(field, kp, 'must be an object')];
  const errs: FieldError[] = [];
  if (typeof kp.key !== 'string' || kp.key === '') errs.push(required(`${field}.key`));
  if (typeof kp.path !== 'string') {
    errs.push(required(`${field}.path`));
  } else {
    if (kp.path === '') errs.push(required(`${field}.path`));
    errs.push(...validateLocalNonReservedPath(kp.path, `${field}.path`));
  }
  errs.push(...validateMode(kp.mode, `${field}.mode`));
  return errs;
}

function validateItems(items: unknown, field: string): FieldError[] {
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) return [invalidValue(field, items, 'must be a list')];
  return items.flatMap((kp, i) => validateKeyToPath(kp, `${field}[${i}]`));
}

/** secret and configMap sources: a name, items with local paths, modes in range. */
function validateKeyedSource(src: Obj, field: string, nameField: 'secretName' | 'name'): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof src[nameField] !== 'string' || src[nameField] === '') errs.push(required(`${field}.${nameField}`));
  errs.push(...validateMode(src.defaultMode, `${field}.defaultMode`));
  errs.push(...validateItems(src.items, `${field}.items`));
  return errs;
}

/** Downward API files: a local path, exactly one of fieldRef and resourceFieldRef, a mode in range. */
function validateDownwardItems(items: unknown, field: string): FieldError[] {
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) return [invalidValue(field, items, 'must be a list')];
  return items.flatMap((item: unknown, i): FieldError[] => {
    const f = `${field}[${i}]`;
    if (!isObj(item)) return [invalidValue(f, item, 'must be an object')];
    const errs: FieldError[] = [];
    if (typeof item.path !== 'string' || item.path === '') errs.push(required(`${f}.path`));
    else errs.push(...validateLocalNonReservedPath(item.path, `${f}.path`));
    const refs = (isObj(item.fieldRef) ? 1 : 0) + (isObj(item.resourceFieldRef) ? 1 : 0);
    if (refs !== 1) errs.push(invalidValue(f, 'fieldRef/resourceFieldRef', 'fieldRef and resourceFieldRef can not be specified simultaneously, and one of them is required'));
    errs.push(...validateMode(item.mode, `${f}.mode`));
    return errs;
  });
}

/** downwardAPI and projected volumes: their file paths and modes, and token requests' lifetimes. */
function validateFileSources(kind: 'downwardAPI' | 'projected', src: Obj, field: string): FieldError[] {
  const errs = validateMode(src.defaultMode, `${field}.defaultMode`);
  if (kind === 'downwardAPI') return [...errs, ...validateDownwardItems(src.items, `${field}.items`)];
  const sources = Array.isArray(src.sources) ? src.sources : [];
  sources.forEach((s: unknown, i) => {
    if (!isObj(s)) return;
    const f = `${field}.sources[${i}]`;
    for (const k of ['secret', 'configMap'] as const) if (isObj(s[k])) errs.push(...validateItems(s[k].items, `${f}.${k}.items`));
    if (isObj(s.downwardAPI)) errs.push(...validateDownwardItems(s.downwardAPI.items, `${f}.downwardAPI.items`));
    const t = s.serviceAccountToken;
    if (isObj(t)) {
      if (typeof t.path !== 'string' || t.path === '') errs.push(required(`${f}.serviceAccountToken.path`));
      else errs.push(...validateLocalNonReservedPath(t.path, `${f}.serviceAccountToken.path`));
      const exp = t.expirationSeconds;
      if (exp !== undefined && exp !== null && (!Number.isInteger(exp) || (exp as number) < 600)) {
        errs.push(invalidValue(`${f}.serviceAccountToken.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
      }
    }
  });
  return errs;
}

function validateSource(v: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  for (const kind of SOURCES) {
    const src = v[kind];
    if (src === undefined || src === null) continue;
    if (n++ > 0) {
      errs.push(forbiddenField(`${field}.${kind}`, 'may not specify more than 1 volume type'));
      continue;
    }
    if (!isObj(src)) {
      errs.push(invalidValue(`${field}.${kind}`, src, 'must be an object'));
      continue;
    }
    if (kind === 'secret') errs.push(...validateKeyedSource(src, `${field}.secret`, 'secretName'));
    else if (kind === 'configMap') errs.push(...validateKeyedSource(src, `${field}.configMap`, 'name'));
    else if (kind === 'downwardAPI' || kind === 'projected') errs.push(...validateFileSources(kind, src, `${field}.${kind}`));
    else if (kind === 'persistentVolumeClaim') {
      if (typeof src.claimName !== 'string' || src.claimName === '') errs.push(required(`${field}.persistentVolumeClaim.claimName`));
    } else if (kind === 'hostPath') {
      if (typeof src.path !== 'string' || src.path === '') errs.push(required(`${field}.hostPath.path`));
      else errs.push(...validatePathNoBacksteps(src.path, `${field}.hostPath.path`));
      if (src.type !== undefined && src.type !== null && !HOST_PATH_TYPES.includes(src.type as string)) {
        errs.push(notSupported(`${field}.hostPath.type`, src.type, HOST_PATH_TYPES));
      }
    }
  }
  if (n === 0) errs.push(required(field, 'Required value: must specify a volume type'));
  return errs;
}

/**
 * `spec.volumes`: each a DNS-1123 label, unique, with exactly one source whose paths and modes
 * are valid. Returns the names of the volumes that passed: a mount of any other name is NotFound,
 * as upstream.
 */
export function validateVolumes(volumes: unknown, path: string): { names: Set<string>; errs: FieldError[] } {
  const names = new Set<string>();
  if (volumes === undefined || volumes === null) return { names, errs: [] };
  if (!Array.isArray(volumes)) return { names, errs: [invalidValue(path, volumes, 'must be a list')] };
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  volumes.forEach((v: unknown, i) => {
    const field = `${path}[${i}]`;
    if (!isObj(v)) {
      errs.push(invalidValue(field, v, 'must be an object'));
      return;
    }
    const el = validateSource(v, field);
    const name = v.name;
    if (typeof name !== 'string' || name === '') {
      el.push(required(`${field}.name`));
    } else {
      const p = dns1123LabelProblem(name);
      if (p) el.push(invalidValue(`${field}.name`, name, p));
      if (seen.has(name)) el.push(duplicate(`${field}.name`, name));
      seen.add(name);
    }
    if (el.length === 0) names.add(name as string);
    errs.push(...el);
  });
  return { names, errs };
}

/**
 * One container's `volumeMounts` (`path` is `spec.containers[i].volumeMounts`): the volume
 * exists, mountPath is set and unique, subPath/subPathExpr are relative without `..` and not both
 * set, Bidirectional propagation only for privileged containers.
 */
export function validateVolumeMounts(mounts: unknown, volumes: ReadonlySet<string>, container: Obj, path: string): FieldError[] {
  if (mounts === undefined || mounts === null) return [];
  if (!Array.isArray(mounts)) return [invalidValue(path, mounts, 'must be a list')];
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  const privileged = isObj(container.securityContext) && container.securityContext.privileged === true;
  mounts.forEach((m: unknown, i) => {
    const idx = `${path}[${i}]`;
    if (!isObj(m)) {
      errs.push(invalidValue(idx, m, 'must be an object'));
      return;
    }
    const name = typeof m.name === 'string' ? m.name : '';
    if (name === '') errs.push(required(`${idx}.name`));
    if (!volumes.has(name)) errs.push(notFound(`${idx}.name`, name));
    const mountPath = typeof m.mountPath === 'string' ? m.mountPath : '';
    if (mountPath === '') errs.push(required(`${idx}.mountPath`));
    if (mountPoints.has(mountPath)) errs.push(invalidValue(`${idx}.mountPath`, mountPath, 'must be unique'));
    mountPoints.add(mountPath);
    for (const key of ['subPath', 'subPathExpr'] as const) {
      const v = m[key];
      if (v === undefined || v === null || v === '') continue;
      if (typeof v !== 'string') errs.push(invalidValue(`${idx}.${key}`, v, 'must be a string'));
      else errs.push(...validateLocalDescendingPath(v, `${path}.${key}`));
    }
    if (typeof m.subPath === 'string' && m.subPath !== '' && typeof m.subPathExpr === 'string' && m.subPathExpr !== '') {
      errs.push(invalidValue(`${idx}.subPathExpr`, m.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
    }
    const prop = m.mountPropagation;
    if (prop !== undefined && prop !== null) {
      if (!PROPAGATIONS.includes(prop as string)) errs.push(notSupported(`${path}.mountPropagation`, prop, PROPAGATIONS));
      else if (prop === 'Bidirectional' && !privileged) {
        errs.push(forbiddenField(`${path}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'));
      }
    }
  });
  return errs;
}

/**
 * Volumes plus the volumeMounts of every init and app container of a pod spec at `path`. What the
 * agent checks before it creates a volume directory or a mount.
 */
export function validatePodVolumes(spec: unknown, path: string): FieldError[] {
  if (!isObj(spec)) return [];
  const { names, errs } = validateVolumes(spec.volumes, `${path}.volumes`);
  for (const list of ['initContainers', 'containers'] as const) {
    const cs = spec[list];
    if (!Array.isArray(cs)) continue;
    cs.forEach((c: unknown, i) => {
      if (isObj(c)) errs.push(...validateVolumeMounts(c.volumeMounts, names, c, `${path}.${list}[${i}].volumeMounts`));
    });
  }
  return errs;
}
