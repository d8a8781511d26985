/**
 * ConfigMap and Secret data for container environments (configMapKeyRef, secretKeyRef, envFrom;
 * env.ts), read at each container start through `sourceReader` (source/watched-objects.ts: the
 * object's watch, or a GET with strategy "Get"), as kubelet reads them through its manager. Strings, not bytes: Secret `data` is base64-decoded as UTF-8, `stringData`
 * (never stored by a real API server, but seen in static setups) is taken as written.
 */
import type { SourceRead } from '../kubecontainer/sources.js';
import type { EnvSourceReader } from './env.js';

/** An EnvSourceReader over `read`. An absent object is undefined; other API errors propagate. */
export function apiEnvSources(read: SourceRead): EnvSourceReader {
  return {
    configMap: async (namespace, name, signal) => {
      const cm = await read('configmap', namespace, name, signal);
      return cm ? (cm.data ?? {}) : undefined;
    },
    secret: async (namespace, name, signal) => {
      const s = await read('secret', namespace, name, signal);
      if (!s) return undefined;
      const out: Record<string, string> = { ...(s.stringData ?? {}) };
      for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
      return out;
    },
  };
}
