/**
 * ConfigMap and Secret contents for volumes, read from the API server on every volume refresh
 * (the kubelet's default "Get" change detection strategy). Bytes, not strings: Secret `data` and
 * ConfigMap `binaryData` may be binary (keystores), and are written to the volume unchanged.
 */
import { hasCode } from '@nodelet/base';
import { CONFIGMAPS, SECRETS, type ApiClient } from '@nodelet/api';
import type { VolumeSourceReader } from '../runtime/volumes.js';

async function orUndefined<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
    throw err;
  }
}

const utf8 = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'utf8')] as const);
const base64 = (m: Record<string, string> | undefined) => Object.entries(m ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const);

/** A VolumeSourceReader over `api`. Absent objects are undefined; other API errors propagate. */
export function apiVolumeSources(api: ApiClient): VolumeSourceReader {
  return {
    configMap: async (namespace, name, signal) => {
      const cm = await orUndefined(() => api.get(CONFIGMAPS, name, { namespace, signal }));
      return cm && Object.fromEntries([...utf8(cm.data), ...base64(cm.binaryData)]);
    },
    secret: async (namespace, name, signal) => {
      const s = await orUndefined(() => api.get(SECRETS, name, { namespace, signal }));
      return s && Object.fromEntries([...utf8(s.stringData), ...base64(s.data)]);
    },
  };
}
