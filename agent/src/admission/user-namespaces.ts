/**
 * `hostUsers: false` asks for a user namespace. The runtime this agent drives (containerd 1.6,
 * CRI without userns support) cannot make one, and running the pod anyway would run it as the
 * host's root, the opposite of what it asked for: such a pod is refused at admission, Failed with
 * a reason that says so and a Warning event.
 */
import { ADMIT, type PodAdmitHandler } from './admit.js';

export const USER_NAMESPACES_NOT_SUPPORTED_REASON = 'UserNamespacesNotSupported';
export const USER_NAMESPACES_NOT_SUPPORTED_MESSAGE = 'the pod asks for a user namespace (hostUsers: false), which the container runtime of this node does not support';

export function userNamespacesAdmitHandler(): PodAdmitHandler {
  return (pod) => (pod.spec?.hostUsers === false ? { admit: false, reason: USER_NAMESPACES_NOT_SUPPORTED_REASON, message: USER_NAMESPACES_NOT_SUPPORTED_MESSAGE } : ADMIT);
}
