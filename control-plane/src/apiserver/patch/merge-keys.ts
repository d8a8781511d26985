/**
 * Strategic-merge-patch list semantics of the served kinds (Go struct tags `patchStrategy` /
 * `patchMergeKey` in k8s.io/api). A list not named here is atomic (replaced whole).
 */
export type ListStrategy = { kind: 'merge'; key: string } | { kind: 'set' } | { kind: 'atomic' };

/** List fields merged by a key, grouped by that key. */
const MERGE_KEY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  name: ['containers', 'initContainers', 'ephemeralContainers', 'env', 'volumes', 'imagePullSecrets', 'resourceClaims'],
  mountPath: ['volumeMounts'],
  devicePath: ['volumeDevices'],
  type: ['conditions'],
  uid: ['ownerReferences'],
  ip: ['hostAliases'],
  topologyKey: ['topologySpreadConstraints'],
};

const BY_FIELD: Readonly<Record<string, ListStrategy>> = {
  ...Object.fromEntries(Object.entries(MERGE_KEY_FIELDS).flatMap(([key, fields]) => fields.map((f) => [f, { kind: 'merge', key } as const]))),
  finalizers: { kind: 'set' },
};

/**
 * The strategy for the list at `path` (field names from the object root, array steps as `[]`)
 * in an object of `kind`.
 */
export function listStrategy(kind: string, path: readonly string[]): ListStrategy {
  const field = path[path.length - 1] ?? '';
  if (field === 'ports') {
    const parent = path[path.length - 2];
    if (parent === '[]' && /^(containers|initContainers|ephemeralContainers)$/.test(path[path.length - 3] ?? '')) return { kind: 'merge', key: 'containerPort' };
    if (kind === 'Service' && path.length === 2 && path[0] === 'spec') return { kind: 'merge', key: 'port' };
    return { kind: 'atomic' };
  }
  if (field === 'addresses' && kind === 'Node' && path[0] === 'status' && path.length === 2) return { kind: 'merge', key: 'type' };
  if (field === 'finalizers' && path.length !== 2) return { kind: 'atomic' };
  return BY_FIELD[field] ?? { kind: 'atomic' };
}
