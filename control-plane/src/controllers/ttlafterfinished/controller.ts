/**
 * TTL-after-finished controller (upstream pkg/controller/ttlafterfinished): a finished Job with
 * `ttlSecondsAfterFinished` is deleted (foreground, so its pods go first) that many seconds after
 * its Complete/Failed condition. The expiry is re-checked on a fresh GET before the delete, and
 * the delete is conditional on the Job's uid, so a replaced or changed Job is never removed.
 * Acts as kube-system/ttl-after-finished-controller.
 */
import { JOBS, type Job } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { keyOf, splitKey } from '../util/pods.js';

/** When a finished Job with a TTL expires (epoch ms), or undefined when it has no TTL or is not finished. */
export function jobExpiresAt(job: Job): number | undefined {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || ttl === null || job.metadata.deletionTimestamp) return undefined;
  const done = (job.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(done.lastTransitionTime ?? job.status?.completionTime ?? '');
  return Number.isFinite(at) ? at + ttl * 1000 : undefined;
}

export class TtlAfterFinishedController extends ControllerBase {
  readonly #jobs;

  constructor(d: ControllerDeps) {
    super(d, { name: 'ttl-after-finished' });
    this.#jobs = this.watch(JOBS, (j) => (jobExpiresAt(j) !== undefined ? keyOf(j) : undefined), ['add', 'update']);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const cached = this.#jobs.get(key);
    if (!cached || jobExpiresAt(cached) === undefined) return;
    const left = jobExpiresAt(cached)! - this.clock.now();
    if (left > 0) return { requeueAfterMs: left };
    const { namespace, name } = splitKey(key);
    const jobs = this.client.resource(JOBS, namespace);
    try {
      // The cache may be stale (TTL changed, Job recreated): decide on the live object.
      const fresh = await jobs.get(name, { signal });
      const at = jobExpiresAt(fresh);
      if (at === undefined) return;
      if (at > this.clock.now()) return { requeueAfterMs: at - this.clock.now() };
      await jobs.delete(name, { signal, propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid } });
      this.log.info({ job: key }, 'Deleted finished job after its TTL');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
  }
}
