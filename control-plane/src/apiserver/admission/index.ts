/** The admission chain every write passes (handlers call {@link admit}); plugins in upstream's order. */
import type { ServerContext } from '../context.js';
import { nodeRestriction } from './node-restriction.js';
import { rbacEscalation } from './rbac-escalation.js';
import { certificateAdmission } from './certificates.js';
import { serviceAccountAdmission } from './service-account.js';
import { defaultStorageClassAdmission } from './default-storage-class.js';
import { runtimeClassAdmission } from './runtime-class.js';
import { podSecurityAdmission } from './pod-security/admission.js';
import { priorityAdmission } from './priority.js';
import { limitRangerAdmission } from './limit-ranger.js';
import { resourceQuotaAdmission } from './resource-quota.js';
import type { AdmissionPlugin, AdmissionRequest } from './types.js';

export type { AdmissionOperation, AdmissionRecorder, AdmissionRequest } from './types.js';

// Mutating plugins first (they change the object the validating ones judge), as kube-apiserver orders them;
// ResourceQuota last, so it charges only what every other plugin let through.
const PLUGINS: readonly AdmissionPlugin[] = [
  serviceAccountAdmission, runtimeClassAdmission, defaultStorageClassAdmission, priorityAdmission, limitRangerAdmission,
  nodeRestriction, podSecurityAdmission, rbacEscalation, certificateAdmission, resourceQuotaAdmission,
];

export async function admit(ctx: ServerContext, r: AdmissionRequest): Promise<void> {
  for (const p of PLUGINS) {
    r.signal?.throwIfAborted();
    await p(ctx, r);
  }
}
