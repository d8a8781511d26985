/**
 * nodelet's local-path provisioner (after k3s's local-path-provisioner), in the server: for a
 * claim of a StorageClass with provisioner `nodelet.io/local-path` that the scheduler has given
 * a node (`volume.kubernetes.io/selected-node`), it creates the PersistentVolume
 * `pvc-<claim uid>`:
 *
 *   hostPath   <node's nodelet.io/local-path-dir>/pvc-<uid>  (type DirectoryOrCreate: the agent
 *              creates the directory when it first mounts it)
 *   nodeAffinity kubernetes.io/hostname In [node]  (the scheduler sends every later pod there)
 *   claimRef   the claim (the binder completes the binding)
 *
 * A volume it made that is Released with reclaimPolicy Delete is deleted (the directory stays on
 * the node: see docs/workloads.md). Acts as kube-system/local-path-provisioner, whose role has
 * upstream's system:persistent-volume-provisioner rules.
 */
import { ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, LOCAL_PATH_DIR_ANNOTATION, NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES, type Node, type PersistentVolume, type PersistentVolumeClaim, type StorageClass } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { LOCAL_PATH_PROVISIONER } from '../../apiserver/default-objects.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf } from '../util/pods.js';

/** Where volumes go on a node that does not say (an agent before nodelet.io/local-path-dir existed). */
export const DEFAULT_LOCAL_PATH_DIR = '/var/lib/nodelet/local-path';

/** The volume for `pvc` on `node` (pure; exported for tests). */
export function localPathVolume(pvc: PersistentVolumeClaim, cls: StorageClass, node: Node): PersistentVolume {
  const name = `pvc-${pvc.metadata.uid}`;
  const annotated = node.metadata.annotations?.[LOCAL_PATH_DIR_ANNOTATION];
  const dir = annotated && annotated.startsWith('/') && !annotated.split('/').includes('..') ? annotated.replace(/\/+$/, '') : DEFAULT_LOCAL_PATH_DIR;
  const hostname = node.metadata.labels?.['kubernetes.io/hostname'] ?? node.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [ANN_DYNAMICALLY_PROVISIONED]: LOCAL_PATH_PROVISIONER } },
    spec: {
      capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '0' },
      accessModes: pvc.spec?.accessModes,
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      storageClassName: cls.metadata.name,
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: pvc.metadata.namespace, name: pvc.metadata.name, uid: pvc.metadata.uid, resourceVersion: pvc.metadata.resourceVersion },
      hostPath: { path: `${dir}/${name}`, type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [hostname] }] }] } },
    },
  };
}

export class LocalPathProvisioner extends ControllerBase {
  readonly #claims;
  readonly #volumes;
  readonly #classes;
  readonly #nodes;

  constructor(d: ControllerDeps) {
    super(d, { name: 'local-path-provisioner', eventComponent: LOCAL_PATH_PROVISIONER });
    this.#claims = this.watch(PERSISTENTVOLUMECLAIMS, (c) => `claim/${keyOf(c)}`, ['add', 'update']);
    this.#volumes = this.watch(PERSISTENTVOLUMES, (v) => `volume/${v.metadata.name}`, ['add', 'update']);
    this.#classes = this.informer(STORAGECLASSES);
    this.#nodes = this.informer(NODES);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    if (key.startsWith('volume/')) return this.#syncVolume(key.slice(7), signal);
    const pvc = this.#claims.get(key.slice(6));
    if (!pvc || pvc.metadata.deletionTimestamp || pvc.spec?.volumeName) return;
    const cls = pvc.spec?.storageClassName ? this.#classes.get(pvc.spec.storageClassName) : undefined;
    if (cls?.provisioner !== LOCAL_PATH_PROVISIONER || pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== LOCAL_PATH_PROVISIONER) return;
    const nodeName = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    if (!nodeName) {
      if (cls.volumeBindingMode !== 'WaitForFirstConsumer') {
        void this.event(pvc, 'Warning', 'ProvisioningFailed', 'failed to provision volume: local-path volumes need a node: use volumeBindingMode WaitForFirstConsumer');
      }
      return;
    }
    const name = `pvc-${pvc.metadata.uid}`;
    if (this.#volumes.get(name)) return;
    const node = this.#nodes.get(nodeName);
    if (!node) {
      void this.event(pvc, 'Warning', 'ProvisioningFailed', `failed to provision volume: node "${nodeName}" not found`);
      return;
    }
    void this.event(pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${keyOf(pvc)}"`);
    try {
      await this.client.resource(PERSISTENTVOLUMES).create(localPathVolume(pvc, cls, node), { signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) {
        void this.event(pvc, 'Warning', 'ProvisioningFailed', `failed to provision volume: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    }
    void this.event(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
  }

  /** A Released volume of ours with reclaimPolicy Delete goes (its claim was deleted). */
  async #syncVolume(name: string, signal: AbortSignal): Promise<void> {
    const pv = this.#volumes.get(name);
    if (!pv || pv.metadata.deletionTimestamp) return;
    if (pv.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== LOCAL_PATH_PROVISIONER) return;
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    await this.client.resource(PERSISTENTVOLUMES).delete(name, { signal, preconditions: { uid: pv.metadata.uid } }).catch((err: unknown) => {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    });
    this.log.info({ volume: name, path: pv.spec?.hostPath?.path }, 'Deleted released local-path volume');
  }
}
