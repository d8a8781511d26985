/**
 * The admission chain every write passes (handlers call {@link admit}), in kube-apiserver's order:
 * mutating admission (built-in plugins, then mutating webhooks), the object validated again when
 * a webhook changed it, then validating admission (built-in plugins, then validating webhooks).
 */
import type { ServerContext } from '../context.js';
import { revalidateAdmitted } from '../handlers/admit.js';
import { nodeRestriction } from './node-restriction.js';
import { rbacEscalation } from './rbac-escalation.js';
import { certificateAdmission } from './certificates.js';
import { serviceAccountAdmission } from './service-account.js';
import { defaultStorageClassAdmission } from './default-storage-class.js';
import { defaultIngressClassAdmission } from './default-ingress-class.js';
import { runtimeClassAdmission } from './runtime-class.js';
import { podSecurityAdmission } from './pod-security/admission.js';
import { priorityAdmission } from './priority.js';
import { limitRangerAdmission } from './limit-ranger.js';
import { resourceQuotaAdmission } from './resource-quota.js';
import { runMutatingWebhooks, runValidatingWebhooks } from './webhook/dispatch.js';
import type { AdmissionPlugin, AdmissionRequest } from './types.js';

export type { AdmissionOperation, AdmissionRecorder, AdmissionRequest } from './types.js';

// The plugins that change objects (and check what they add); they run before the webhooks, as kube-apiserver orders them.
const MUTATING: readonly AdmissionPlugin[] = [serviceAccountAdmission, runtimeClassAdmission, defaultStorageClassAdmission, defaultIngressClassAdmission, priorityAdmission, limitRangerAdmission];
// The plugins that only judge: after the webhooks, so a webhook's change is judged too (PodSecurity above all).
const VALIDATING: readonly AdmissionPlugin[] = [nodeRestriction, podSecurityAdmission, rbacEscalation, certificateAdmission];

async function runPlugins(ctx: ServerContext, r: AdmissionRequest, plugins: readonly AdmissionPlugin[]): Promise<void> {
  for (const p of plugins) {
    r.signal?.throwIfAborted();
    await p(ctx, r);
  }
}

export async function admit(ctx: ServerContext, r: AdmissionRequest): Promise<void> {
  await runPlugins(ctx, r, MUTATING);
  // A subresource with a kind of its own (eviction, token) carries no object of the resource's kind to validate.
  const ownKind = r.subresource !== undefined && r.def.subresources.some((s) => s.name === r.subresource && s.kind);
  if ((await runMutatingWebhooks(ctx, r)) && r.object && !ownKind) revalidateAdmitted(r.def, r.object, r.oldObject);
  await runPlugins(ctx, r, VALIDATING);
  r.signal?.throwIfAborted();
  await runValidatingWebhooks(ctx, r);
  // ResourceQuota last, so it charges only what every plugin and webhook let through.
  r.signal?.throwIfAborted();
  await resourceQuotaAdmission(ctx, r);
}

/**
 * Admission of a CONNECT (pods/exec, pods/attach, pods/portforward): the mutating and validating
 * webhooks whose rules name CONNECT, with the connect options as the object. None of the built-in
 * plugins here judges CONNECT requests.
 */
export async function admitConnect(ctx: ServerContext, r: AdmissionRequest): Promise<void> {
  await runMutatingWebhooks(ctx, r);
  r.signal?.throwIfAborted();
  await runValidatingWebhooks(ctx, r);
}
