/**
 * The kubelet's CRI labels and annotations (kuberuntime/labels.go). Every sandbox and container the
 * agent creates carries them, so that a restarted agent rebuilds its whole view from CRI listings
 * (stateless recovery) and `crictl ps` / `nodelet cri ps` show pod names.
 */
import { createHash } from 'node:crypto';
import type { Container } from '@nodelet/api/agent';

export const POD_NAME = 'io.kubernetes.pod.name';
export const POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const POD_UID = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME = 'io.kubernetes.container.name';
export const CONTAINER_HASH = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const CONTAINER_TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
export const POD_TERMINATION_GRACE_PERIOD = 'io.kubernetes.pod.terminationGracePeriod';
/** Which list the container came from: nodelet-specific, so init containers are told apart after a restart. */
export const CONTAINER_TYPE = 'io.kubernetes.container.type';
/** kubelet marks its own objects with this label; listings filter on it so foreign sandboxes are left alone. */
export const MANAGED_BY = 'io.kubernetes.nodelet.managed';

/** `ephemeral`: a debugging container of spec.ephemeralContainers (never restarted, never probed). */
export type ContainerType = 'init' | 'regular' | 'ephemeral';

/** Stable JSON (sorted keys), so a hash does not depend on key order from the API server. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The spec hash stored on a container: when the desired container's hash differs from a running
 * one's, the running one is killed and recreated (kubelet `HashContainer`). Resources are left out,
 * as the kubelet does since in-place resize, and so are fields that do not change what runs.
 */
export function containerHash(c: Container): string {
  const { resources: _r, livenessProbe: _l, readinessProbe: _rp, startupProbe: _s, ...rest } = c;
  return createHash('sha256').update(stableJson(rest)).digest('hex').slice(0, 8);
}
