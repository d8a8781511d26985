/**
 * Kubernetes resource quantities ("500m", "128Mi", "2") as plain numbers, for cgroup settings and
 * node capacity. Thin adapters over @nodelet/api's parser and formatter, so there is one
 * implementation of the quantity grammar in the project.
 */
import { formatQuantity, parseQuantity as parseApiQuantity, parseQuantityMilli } from '@nodelet/api/agent';

/** The value in base units (cores, bytes). Throws ERR_INVALID_ARGUMENT on malformed input. */
export function parseQuantity(q: string | number): number {
  return typeof q === 'number' ? q : parseApiQuantity(q.trim());
}

/** CPU quantity → millicores, rounded up like the kubelet's MilliValue(). */
export function milliCpu(q: string | number): number {
  return typeof q === 'number' ? Math.ceil(q * 1000 - 1e-9) : parseQuantityMilli(q.trim());
}

/** Bytes in the API server's canonical binary form ("4Gi", "1536Ki", or plain bytes). */
export function formatBytes(bytes: number): string {
  return formatQuantity(Math.max(0, Math.floor(bytes)), 'BinarySI');
}
