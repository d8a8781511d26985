/**
 * Read-your-writes for what the server reads from memory: after a write to an object it mirrors
 * (RBAC kinds, namespaces, service accounts), the reply waits until the mirror has applied it
 * (a few ms), so a binding created by `kubectl create rolebinding` is in force for the very next
 * request, and a pod created after its namespace was deleted is refused.
 */
import type { ServerContext } from '../context.js';
import type { ApiObject } from '../object.js';
import type { ResourceDef } from '../resource.js';

export async function awaitVisible(ctx: ServerContext, def: ResourceDef, obj: ApiObject): Promise<void> {
  const mirror = ctx.mirrorOf?.(def);
  const rv = Number(obj.metadata.resourceVersion);
  if (mirror && Number.isSafeInteger(rv) && rv > 0) await mirror.waitForRevision(rv);
}
