/**
 * The observable point before a test asserts that a controller did *not* act: every write the
 * test made has reached the controllers' informers, and every key those writes (and the
 * controllers' own writes in turn) enqueued has been reconciled. A sleep instead passes whenever
 * the controller simply has not run yet.
 *
 *   idle? ──▶ every informer's cache = the server's list ──▶ still idle, no key handed out since?
 *     ▲                (keys and resourceVersions)                        │ no
 *     └───────────────────────────────────────────────────────────────────┘
 *
 * Idle: no key waiting or being reconciled in any work queue. A key delayed by addAfter or the
 * rate limiter (a backoff, a deadline on a jump clock) is work for later, not work now. If no key
 * was handed out between the two idle checks, no reconcile ran, so the lists hold every write of
 * every reconcile that finished; a cache equal to its list has delivered those writes' events,
 * and an event's handler enqueues synchronously, so a key it caused would have shown as work.
 * Covers what controllers do through their queues (the shape of every ControllerBase).
 */
import type { ApiClient, KubeObject, WorkQueue } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import type { Controller, SharedInformers } from '../runtime.js';

/** What quiesce watches: a ControllerManagerHandle, or controllers a test runs itself. */
export interface Quiescible {
  readonly controllers: ReadonlyArray<Pick<Controller, 'queue'>>;
  readonly informers: SharedInformers;
}

function work(queues: readonly WorkQueue[]): { active: number; handedOut: number } {
  return { active: queues.reduce((n, q) => n + q.active, 0), handedOut: queues.reduce((n, q) => n + q.handedOut, 0) };
}

/** True when every informer has synced and caches exactly what `client` lists now (same keys, same resourceVersions). */
async function caughtUp(informers: SharedInformers, client: ApiClient): Promise<boolean> {
  for (const inf of informers.list()) {
    if (!inf.hasSynced()) return false;
    const { resource, namespace, labelSelector, fieldSelector } = inf.scope;
    const server = (await client.list(resource, { namespace, labelSelector, fieldSelector })).items;
    const cached = new Map(inf.list().map((o: KubeObject) => [`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o.metadata.resourceVersion]));
    if (server.length !== cached.size) return false;
    for (const o of server) if (cached.get(`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`) !== o.metadata.resourceVersion) return false;
  }
  return true;
}

/**
 * Resolves once `m`'s controllers have observed every write made so far (read back through
 * `client`, which must be able to list what they watch) and have nothing left to do now; throws
 * if that does not happen within `timeoutMs`. Call it after the write, before the negative assert.
 */
export async function quiesce(m: Quiescible, client: ApiClient, timeoutMs = 8000): Promise<void> {
  const queues = m.controllers.map((c) => c.queue);
  await pollUntil('controllers caught up with the server and idle', async () => {
    const before = work(queues);
    if (before.active > 0 || !(await caughtUp(m.informers, client))) return undefined;
    const after = work(queues);
    return after.active === 0 && after.handedOut === before.handedOut ? true : undefined;
  }, { timeoutMs, intervalMs: 10 });
}
