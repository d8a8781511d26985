/**
 * PersistentVolume binder (upstream pkg/controller/volume/persistentvolume, the parts nodelet
 * uses): binds claims and volumes both ways and keeps their phases.
 *
 *   claim, no volumeName ─▶ a PV whose claimRef names it (provisioned for it) ─▶ bind
 *                        ─▶ else WaitForFirstConsumer and no selected node ─▶ wait (event)
 *                        ─▶ else an Available PV of its class, access modes, size (and the
 *                           selected node) ─▶ bind
 *                        ─▶ else a class with a provisioner ─▶ annotate
 *                           volume.kubernetes.io/storage-provisioner, ExternalProvisioning event
 *   bind = PV.claimRef (update) → PV Bound (status) → PVC.volumeName + bind-completed (update) →
 *          PVC Bound with capacity and access modes (status); each step idempotent
 *   volume without claimRef ─▶ Available; its claim gone ─▶ Released (the provisioner deletes
 *          Released volumes it made with reclaimPolicy Delete)
 *
 * Acts as kube-system/persistent-volume-binder with upstream's role (updates, no patches).
 */
import { ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, NODES, parseQuantity, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES, type PersistentVolume, type PersistentVolumeClaim } from '@nodelet/api';
import { hasCode, unlessNotFound } from '@nodelet/base';
import { nodeSelectorTermMatches } from '../../scheduler/filters.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf } from '../util/pods.js';

const NO_PROVISIONER = 'kubernetes.io/no-provisioner';
const storageOf = (q: string | undefined): number => {
  try {
    return q ? parseQuantity(q) : 0;
  } catch {
    return 0;
  }
};

/** Whether `pv` can serve `pvc` (class, modes, size, and the selected node when there is one). */
export function volumeMatchesClaim(pv: PersistentVolume, pvc: PersistentVolumeClaim, node?: { metadata: { name?: string; labels?: Record<string, string> } }): boolean {
  if (pv.spec?.claimRef || pv.metadata.deletionTimestamp || (pv.status?.phase && pv.status.phase !== 'Available')) return false;
  if ((pv.spec?.storageClassName ?? '') !== (pvc.spec?.storageClassName ?? '')) return false;
  if ((pv.spec?.volumeMode ?? 'Filesystem') !== (pvc.spec?.volumeMode ?? 'Filesystem')) return false;
  if (!(pvc.spec?.accessModes ?? []).every((m) => (pv.spec?.accessModes ?? []).includes(m))) return false;
  if (storageOf(pv.spec?.capacity?.storage) < storageOf(pvc.spec?.resources?.requests?.storage)) return false;
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (node && terms && !terms.some((t) => nodeSelectorTermMatches(t, node as never))) return false;
  return true;
}

export class PersistentVolumeBinder extends ControllerBase {
  readonly #claims;
  readonly #volumes;
  readonly #classes;
  readonly #nodes;
  readonly #waitReported = new Set<string>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'persistentvolume-binder', eventComponent: 'persistentvolume-controller' });
    this.#claims = this.watch(PERSISTENTVOLUMECLAIMS, (c) => `claim/${keyOf(c)}`, ['add', 'update']);
    // A deleted claim releases its volume.
    this.watch(PERSISTENTVOLUMECLAIMS, (c) => (c.spec?.volumeName ? `volume/${c.spec.volumeName}` : undefined), ['delete']);
    this.#volumes = this.watch(PERSISTENTVOLUMES, (v) => `volume/${v.metadata.name}`);
    // A volume's change may bind, or release, the claim it names.
    this.watch(PERSISTENTVOLUMES, (v) => (v.spec?.claimRef?.name ? `claim/${v.spec.claimRef.namespace}/${v.spec.claimRef.name}` : undefined));
    this.#classes = this.informer(STORAGECLASSES);
    this.#nodes = this.informer(NODES);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    if (key.startsWith('claim/')) return this.#syncClaim(key.slice(6), signal);
    return this.#syncVolume(key.slice(7), signal);
  }

  async #syncClaim(key: string, signal: AbortSignal): Promise<void> {
    const pvc = this.#claims.get(key);
    if (!pvc || pvc.metadata.deletionTimestamp) return;
    if (pvc.spec?.volumeName) {
      const pv = this.#volumes.get(pvc.spec.volumeName);
      if (pv) await this.#bind(pv, pvc, signal);
      return;
    }
    let pv = this.#volumes.list().find((v) => v.spec?.claimRef?.name === pvc.metadata.name && v.spec?.claimRef?.namespace === pvc.metadata.namespace && (!v.spec?.claimRef?.uid || v.spec.claimRef.uid === pvc.metadata.uid));
    const cls = pvc.spec?.storageClassName ? this.#classes.get(pvc.spec.storageClassName) : undefined;
    const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    if (!pv) {
      if (cls?.volumeBindingMode === 'WaitForFirstConsumer' && !selected) {
        if (!this.#waitReported.has(pvc.metadata.uid ?? '')) {
          this.#waitReported.add(pvc.metadata.uid ?? '');
          void this.event(pvc, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
        }
        return;
      }
      const node = selected ? this.#nodes.get(selected) : undefined;
      pv = this.#volumes
        .list()
        .filter((v) => volumeMatchesClaim(v, pvc, node))
        .sort((a, b) => storageOf(a.spec?.capacity?.storage) - storageOf(b.spec?.capacity?.storage))[0];
    }
    if (!pv) {
      if (cls?.provisioner && cls.provisioner !== NO_PROVISIONER) {
        if (pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== cls.provisioner) {
          const annotations = { ...pvc.metadata.annotations, [ANN_STORAGE_PROVISIONER]: cls.provisioner, [ANN_BETA_STORAGE_PROVISIONER]: cls.provisioner };
          await this.client.resource(PERSISTENTVOLUMECLAIMS, pvc.metadata.namespace).update({ ...pvc, metadata: { ...pvc.metadata, annotations } }, { signal });
          void this.event(pvc, 'Normal', 'ExternalProvisioning', `Waiting for a volume to be created either by the external provisioner '${cls.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`);
        }
      } else if (!this.#waitReported.has(pvc.metadata.uid ?? '')) {
        this.#waitReported.add(pvc.metadata.uid ?? '');
        void this.event(pvc, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      }
      return;
    }
    await this.#bind(pv, pvc, signal);
  }

  /** Each half of the binding, skipped when already done, so a retry after a crash completes it. */
  async #bind(pv: PersistentVolume, pvc: PersistentVolumeClaim, signal: AbortSignal): Promise<void> {
    const volumes = this.client.resource(PERSISTENTVOLUMES);
    const claims = this.client.resource(PERSISTENTVOLUMECLAIMS, pvc.metadata.namespace);
    const ref = pv.spec?.claimRef;
    if (ref?.uid && ref.uid !== pvc.metadata.uid) return;
    if (!ref?.uid) {
      const claimRef = { kind: 'PersistentVolumeClaim', namespace: pvc.metadata.namespace, name: pvc.metadata.name, uid: pvc.metadata.uid, apiVersion: 'v1', resourceVersion: pvc.metadata.resourceVersion };
      const annotations = ref ? pv.metadata.annotations : { ...pv.metadata.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      pv = await volumes.update({ ...pv, metadata: { ...pv.metadata, annotations }, spec: { ...pv.spec, claimRef } }, { signal });
    }
    if (pv.status?.phase !== 'Bound') pv = await volumes.updateStatus({ ...pv, status: { phase: 'Bound' } }, { signal });
    if (pvc.spec?.volumeName !== pv.metadata.name || pvc.metadata.annotations?.[ANN_BIND_COMPLETED] !== 'yes') {
      const annotations = { ...pvc.metadata.annotations, [ANN_BIND_COMPLETED]: 'yes', ...(pvc.spec?.volumeName ? {} : { [ANN_BOUND_BY_CONTROLLER]: 'yes' }) };
      pvc = await claims.update({ ...pvc, metadata: { ...pvc.metadata, annotations }, spec: { ...pvc.spec, volumeName: pv.metadata.name } }, { signal });
    }
    if (pvc.status?.phase !== 'Bound') {
      await claims.updateStatus({ ...pvc, status: { phase: 'Bound', accessModes: pv.spec?.accessModes, capacity: pv.spec?.capacity } }, { signal });
      this.log.info({ claim: keyOf(pvc), volume: pv.metadata.name }, 'Claim bound');
    }
  }

  async #syncVolume(name: string, signal: AbortSignal): Promise<void> {
    const pv = this.#volumes.get(name);
    if (!pv || pv.metadata.deletionTimestamp) return;
    const ref = pv.spec?.claimRef;
    let phase = pv.status?.phase;
    if (!ref?.name) phase = 'Available';
    else {
      let pvc = this.#claims.get(`${ref.namespace}/${ref.name}`);
      if (!pvc) {
        // The cache may lag behind a claim created a moment ago: ask before releasing.
        pvc = await unlessNotFound(this.client.resource(PERSISTENTVOLUMECLAIMS, ref.namespace).get(ref.name, { signal }));
      }
      if (!pvc || (ref.uid && pvc.metadata.uid !== ref.uid)) phase = ref.uid ? 'Released' : 'Available';
      else if (pvc.spec?.volumeName === pv.metadata.name) phase = 'Bound';
      else this.queue.add(`claim/${keyOf(pvc)}`);
    }
    if (phase && phase !== pv.status?.phase) {
      await this.client.resource(PERSISTENTVOLUMES).updateStatus({ ...pv, status: { phase } }, { signal }).catch((err: unknown) => {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      });
    }
  }
}
