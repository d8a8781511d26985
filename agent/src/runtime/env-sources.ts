/**
 * ConfigMap and Secret data for container environments (configMapKeyRef, secretKeyRef, envFrom;
 * env.ts), read from the API server at each container start (kubelet reads them directly, not
 * through a cache). Strings, not bytes: Secret `data` is base64-decoded as UTF-8, `stringData`
 * (never stored by a real API server, but seen in static setups) is taken as written.
 */
import { unlessNotFound } from '@nodelet/base';
import { CONFIGMAPS, SECRETS, type ApiClient } from '@nodelet/api/agent';
import type { EnvSourceReader } from './env.js';

/** An EnvSourceReader over `api`. An absent object is undefined; other API errors propagate. */
export function apiEnvSources(api: ApiClient): EnvSourceReader {
  return {
    configMap: async (namespace, name, signal) => {
      const cm = await unlessNotFound(api.get(CONFIGMAPS, name, { namespace, signal }));
      return cm ? (cm.data ?? {}) : undefined;
    },
    secret: async (namespace, name, signal) => {
      const s = await unlessNotFound(api.get(SECRETS, name, { namespace, signal }));
      if (!s) return undefined;
      const out: Record<string, string> = { ...(s.stringData ?? {}) };
      for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
      return out;
    },
  };
}
