/**
 * Strategic-merge-patch list semantics of the served kinds (Go struct tags `patchStrategy` /
 * `patchMergeKey` in k8s.io/api). A list not named here is atomic (replaced whole).
 */
export type ListStrategy = { kind: 'merge'; key: string } | { kind: 'set' } | { kind: 'atomic' };

const BY_FIELD: Readonly<Record<string, ListStrategy>> = {
  containers: { kind: 'merge', key: 'name' },
  initContainers: { kind: 'merge', key: 'name' },
  ephemeralContainers: { kind: 'merge', key: 'name' },
  env: { kind: 'merge', key: 'name' },
  volumes: { kind: 'merge', key: 'name' },
  imagePullSecrets: { kind: 'merge', key: 'name' },
  resourceClaims: { kind: 'merge', key: 'name' },
  volumeMounts: { kind: 'merge', key: 'mountPath' },
  volumeDevices: { kind: 'merge', key: 'devicePath' },
  conditions: { kind: 'merge', key: 'type' },
  ownerReferences: { kind: 'merge', key: 'uid' },
  hostAliases: { kind: 'merge', key: 'ip' },
  topologySpreadConstraints: { kind: 'merge', key: 'topologyKey' },
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
