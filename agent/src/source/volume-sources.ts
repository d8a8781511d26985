/**
 * ConfigMap and Secret contents for volumes, read on every volume refresh through `sourceReader`
 * (watched-objects.ts): from the object's single-object watch (kubelet's default "Watch" change
 * detection strategy), or with strategy "Get" by a GET each time (overlapping reads of one object
 * share one GET). Bytes, not strings: Secret `data` and ConfigMap `binaryData` may be binary
 * (keystores), and are written to the volume unchanged.
 */
import { AgentError, unlessNotFound } from '@nodelet/base';
import { PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, type ApiClient } from '@nodelet/api/agent';
import type { VolumeSourceReader } from '../runtime/volumes.js';
import type { PullSecretReader } from '../runtime/keyring.js';
import type { SourceRead } from './watched-objects.js';

const utf8 = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'utf8')] as const);
const base64 = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const);

/** A VolumeSourceReader over `api` (claims) and `read` (ConfigMaps, Secrets). Absent objects are undefined; other API errors propagate. */
export function apiVolumeSources(api: ApiClient, read: SourceRead): VolumeSourceReader {
  return {
    configMap: async (namespace, name, signal) => {
      const cm = await read('configmap', namespace, name, signal);
      return cm && Object.fromEntries([...utf8(cm.data), ...base64(cm.binaryData)]);
    },
    secret: async (namespace, name, signal) => {
      const s = await read('secret', namespace, name, signal);
      return s && Object.fromEntries([...utf8(s.stringData), ...base64(s.data)]);
    },
    claimVolume: async (namespace, claimName, signal) => {
      const pvc = await unlessNotFound(api.get(PERSISTENTVOLUMECLAIMS, claimName, { namespace, signal }));
      if (!pvc) throw new AgentError('ERR_FAILED_PRECONDITION', `persistentvolumeclaim "${claimName}" not found`);
      const pvName = pvc.spec?.volumeName;
      if (!pvName || pvc.status?.phase !== 'Bound') throw new AgentError('ERR_FAILED_PRECONDITION', `persistentvolumeclaim "${claimName}" is not bound`);
      const pv = await unlessNotFound(api.get(PERSISTENTVOLUMES, pvName, { signal }));
      if (!pv) throw new AgentError('ERR_FAILED_PRECONDITION', `persistentvolume "${pvName}" of claim "${claimName}" not found`);
      if (pv.spec?.claimRef?.uid && pv.spec.claimRef.uid !== pvc.metadata.uid) throw new AgentError('ERR_FAILED_PRECONDITION', `persistentvolume "${pvName}" is bound to another claim`);
      if (pv.spec?.hostPath) return { path: pv.spec.hostPath.path, create: pv.spec.hostPath.type === 'DirectoryOrCreate' };
      if (pv.spec?.local) return { path: pv.spec.local.path, create: false };
      throw new AgentError('ERR_FAILED_PRECONDITION', `persistentvolume "${pvName}": only hostPath and local volumes can be mounted by this node`);
    },
  };
}

/** Image pull secrets through `read`: type and decoded data; absent secrets are undefined. */
export function apiPullSecrets(read: SourceRead): PullSecretReader {
  return async (namespace, name, signal) => {
    const s = await read('secret', namespace, name, signal);
    return s && { name, type: s.type, data: Object.fromEntries([...utf8(s.stringData), ...base64(s.data)]) };
  };
}
