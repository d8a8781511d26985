import type { CniErrorJSON } from '../errors.js';

/**
 * What nodelet-cni (cni/shim/nodelet-cni.mjs) sends over the service socket: the CNI_*
 * environment it was run with and the config it read on stdin. HTTP/1.1, POST /v1/cni.
 */
export interface ShimRequest {
  env: Partial<Record<'CNI_COMMAND' | 'CNI_CONTAINERID' | 'CNI_NETNS' | 'CNI_IFNAME' | 'CNI_ARGS' | 'CNI_PATH', string>>;
  config: Record<string, unknown>;
}

export type ShimResponse = { ok: true; result?: Record<string, unknown> } | { ok: false; error: CniErrorJSON };

export const SHIM_PATH = '/v1/cni';
export const MAX_REQUEST_BYTES = 1 << 20;
