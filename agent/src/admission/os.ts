/**
 * The OS checks of kubelet's predicate admit, run before the resource fit because evicting pods
 * cannot help them: a pod whose `spec.os.name`, or whose own `kubernetes.io/os` label, names
 * another OS than this Linux node's is refused. (kubelet reads the label on the pod, not its
 * nodeSelector; so does this.)
 */
import type { Pod } from '@nodelet/api/agent';
import { ADMIT, type PodAdmitHandler } from './admit.js';

/** The node's OS as kubelet reports it (runtime.GOOS); the agent runs on Linux only. */
const NODE_OS = 'linux';
const OS_LABEL = 'kubernetes.io/os';

export const POD_OS_NOT_SUPPORTED = 'PodOSNotSupported';
export const POD_OS_LABEL_MISMATCH = 'PodOSSelectorNodeLabelDoesNotMatch';

export const osAdmitHandler: PodAdmitHandler = (pod: Pod) => {
  const label = pod.metadata.labels?.[OS_LABEL];
  if (label !== undefined && label !== NODE_OS) {
    return { admit: false, reason: POD_OS_LABEL_MISMATCH, message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" };
  }
  // PodSpec.os is not in the typed PodSpec; the API validates it (linux or windows).
  const os = (pod.spec as { os?: { name?: string } | null } | undefined)?.os;
  if (os?.name !== undefined && os.name !== NODE_OS) {
    return { admit: false, reason: POD_OS_NOT_SUPPORTED, message: "Failed to admit pod as the OS field doesn't match node OS" };
  }
  return ADMIT;
};
