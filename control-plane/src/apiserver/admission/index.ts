/** The admission chain every write passes (handlers call {@link admit}); plugins in upstream's order. */
import type { ServerContext } from '../context.js';
import { nodeRestriction } from './node-restriction.js';
import { rbacEscalation } from './rbac-escalation.js';
import { certificateAdmission } from './certificates.js';
import type { AdmissionPlugin, AdmissionRequest } from './types.js';

export type { AdmissionOperation, AdmissionRequest } from './types.js';

const PLUGINS: readonly AdmissionPlugin[] = [nodeRestriction, rbacEscalation, certificateAdmission];

export async function admit(ctx: ServerContext, r: AdmissionRequest): Promise<void> {
  for (const p of PLUGINS) await p(ctx, r);
}
