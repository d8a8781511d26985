/**
 * Namespace deletion (kube's namespace controller, in-process): a namespace marked for deletion
 * is emptied — every namespaced object deleted with default options (pods on nodes are marked
 * and wait for their agent) — and removed once nothing is left. Runs every `intervalMs` until
 * the server's shutdown signal.
 */
import { delay, isAbortError, type Logger } from '@nodelet/base';
import type { ServedResource, ServerContext } from './context.js';
import { MATCH_ALL } from './filter.js';
import { deleteObject } from './handlers/delete.js';

export function startNamespaceLifecycle(ctx: ServerContext, resources: () => readonly ServedResource[], log: Logger, intervalMs = 1000): Promise<void> {
  const namespaces = resources().find((r) => r.def.kind === 'Namespace')!;
  return (async () => {
    while (!ctx.shutdown.aborted) {
      try {
        const list = await namespaces.registry.list({ filter: (o) => !!o.metadata.deletionTimestamp });
        for (const ns of list.items) await finalize(ns.metadata.name!);
      } catch (err) {
        if (!ctx.shutdown.aborted) log.warn({ err }, 'Namespace cleanup failed');
      }
      try {
        await delay(intervalMs, ctx.shutdown);
      } catch (err) {
        if (isAbortError(err)) return;
        throw err;
      }
    }
  })();

  async function finalize(name: string): Promise<void> {
    let remaining = 0;
    // Read each pass: custom resources come and go (catalog.ts). Versions of one custom resource
    // share storage, so only one of them is emptied.
    const seen = new Set<string>();
    for (const r of resources()) {
      if (!r.def.namespaced || r.def.ephemeral || seen.has(r.registry.prefix())) continue;
      seen.add(r.registry.prefix());
      const page = await r.registry.list({ namespace: name, filter: MATCH_ALL });
      remaining += page.items.length;
      for (const o of page.items) {
        if (o.metadata.deletionTimestamp) continue;
        await deleteObject(ctx, r, name, o.metadata.name!, {}).catch(() => undefined); // not deleted yet: counted in remaining, retried on the next pass
      }
    }
    if (remaining > 0) return;
    const ns = await namespaces.registry.find(undefined, name);
    if (ns?.metadata.deletionTimestamp && !(ns.metadata.finalizers?.length)) {
      await namespaces.registry.remove(ns).catch(() => undefined); // already gone or changed: the next pass looks again
      log.info({ namespace: name }, 'Namespace removed');
    }
  }
}
