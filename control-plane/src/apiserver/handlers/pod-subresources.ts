/** pods/binding (the scheduler's POST); pods/eviction is in eviction.ts. */
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import type { Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest, StatusError } from '../status.js';
import { rfc3339 } from '@nodelet/api';
import { writeOptionsOf } from '../request-options.js';

export async function handleBinding(s: RequestScope): Promise<void> {
  const { dryRun } = writeOptionsOf(s.url, 'CreateOptions');
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const target = body.target as Json | undefined;
  const nodeName = target?.name;
  if (typeof nodeName !== 'string' || nodeName === '') throw badRequest('binding target name is required');
  if (target?.kind !== undefined && target.kind !== 'Node') throw badRequest('binding target must be a Node');
  const name = s.name!;
  await s.served.registry.guaranteedUpdate(s.namespace, name, (pod) => {
    const spec = (pod.spec ?? {}) as Json;
    if (pod.metadata.deletionTimestamp) throw new StatusError(409, 'Conflict', `pod ${name} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName) throw new StatusError(409, 'Conflict', `pod ${name} is already assigned to node "${String(spec.nodeName)}"`);
    spec.nodeName = nodeName;
    pod.spec = spec;
    const status = (pod.status ?? {}) as Json;
    const conditions = ((status.conditions ?? []) as Json[]).filter((c) => c.type !== 'PodScheduled');
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(s.ctx.now()) });
    pod.status = { ...status, conditions };
    // A dry run checks the binding as a real one would and writes nothing.
    return dryRun ? undefined : pod;
  });
  sendJson(s.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}
