import type { CniErrorJSON } from '../errors.js';

/**
 * What nodelet-cni (cni/shim/nodelet-cni.mjs) sends over the service socket: the CNI_*
 * environment it was run with and the config it read on stdin. HTTP/1.1, POST /v1/cni.
 */
export interface ShimRequest {
  env: Partial<Record<'CNI_COMMAND' | 'CNI_CONTAINERID' | 'CNI_NETNS' | 'CNI_IFNAME' | 'CNI_ARGS' | 'CNI_PATH', string>>;
  config: Record<string, unknown>;
}

/**
 * The answer is what the shim prints, so it stays trivial (and writable in C): HTTP 200 = success,
 * body = the result JSON (empty for DEL/CHECK/STATUS/GC); any other status = failure, body = the
 * spec error JSON; the shim exits 1.
 */
export type ShimResponse = { status: 200; body: Record<string, unknown> | undefined } | { status: 422; body: CniErrorJSON };

export const SHIM_PATH = '/v1/cni';
export const MAX_REQUEST_BYTES = 1 << 20;
