/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's rules and defaults
 * (lease 15 s, renew deadline 10 s, retry period 2 s), so that of several `nodelet server`
 * processes exactly one runs the scheduler and one the controller manager (docs/ha.md):
 *
 *          ┌──── retry every 2–2.4 s, or when the watched lease expires ──┐
 *          ▼                                                      │ lease held by another and
 *   standby: tryAcquireOrRenew ──────────────────────────────────┘ seen unchanged < 15 s
 *          │ acquired (created, or taken over: leaseTransitions + 1)
 *          ▼
 *   leading: lead(signal) runs; renew every 2 s ── no renewal for 10 s, or the lease is seen
 *          │                                       held by another, or lead() ended
 *          │ run's signal aborts                               │ signal aborted at once
 *          ▼                                                   ▼
 *   await lead() ─▶ release (holder '', 1 s) ─▶ done       await lead() ─▶ release ─▶ standby
 *
 * Safety: a standby only takes a lease it has watched stay unchanged for leaseDuration, timed on
 * its own monotonic clock from when it first saw that record (no cross-machine clock
 * comparison). A leader measures its renew deadline from the start of its last successful
 * renewal, which is before the write the standby saw, and stops acting when it passes: 10 s is
 * under the 15 s a standby waits, so two electors never act at once even with a hung request.
 *
 * Every write is a compare-and-swap on the lease's resourceVersion (LeaseLock.update), so two
 * standbys racing for an expired lease cannot both win.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeError, hasCode, isAbortError, jitter, linkAbort, type Clock, type Logger } from '@nodelet/base';
import { rfc3339Micro, type Lease, type LeaseSpec } from '@nodelet/api';
import type { LeaseLock } from './lease-lock.js';

/** client-go's defaults (kube-scheduler's and kube-controller-manager's --leader-elect-* flags). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/**
 * Standbys retry every 2–2.4 s and also wake when the lease they watch expires. client-go
 * jitters by 1.2 (2–4.4 s), which after a crash can add its whole 4.4 s twice (seeing the last
 * renewal late, trying again late): fail-over would take up to 24 s instead of 15–17.5 s.
 */
const JITTER_FACTOR = 0.2;
/** client-go's check: the renew deadline must leave room for retries (its JitterFactor). */
const RENEW_DEADLINE_FACTOR = 1.2;
/** How long the release write at stop may take before the lease is left to expire. */
const RELEASE_TIMEOUT_MS = 5_000;

export interface LeaderElectorOptions {
  lock: LeaseLock;
  /** Unique per process: {@link leaderIdentity}. */
  identity: string;
  clock: Clock;
  log: Logger;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** For the acquire jitter (tests pin it). */
  random?: () => number;
}

/** `<hostname>_<random uuid>`, as kube-scheduler and kube-controller-manager name themselves. */
export function leaderIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/**
 * The work a leader does: started when the lease is acquired, with a signal that aborts the
 * moment leadership is lost or the elector stops. It must stop acting at once when the signal
 * aborts and resolve when it has stopped (the lease is released only after that).
 */
export type LeaderWork = (signal: AbortSignal) => Promise<void>;

/**
 * One elector per lease per process. {@link run} is called once; `isLeader` may be read at any
 * time (it turns false before `lead`'s signal aborts is observed by anyone else).
 */
export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, 'random'>> & { random: () => number };
  /** The last lease read or written, and when (monotonic) its spec was first seen. */
  #observed?: Lease;
  #observedKey = '';
  #observedAt = 0;
  #leading = false;
  #running = false;

  constructor(o: LeaderElectorOptions) {
    const leaseDurationMs = o.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    const renewDeadlineMs = o.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    const retryPeriodMs = o.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    // client-go's NewLeaderElector checks: the leader must give up before a standby may take over.
    if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > RENEW_DEADLINE_FACTOR * retryPeriodMs && retryPeriodMs > 0)) {
      throw new RangeError(`leader election needs leaseDuration > renewDeadline > ${RENEW_DEADLINE_FACTOR} × retryPeriod > 0, got ${leaseDurationMs}/${renewDeadlineMs}/${retryPeriodMs} ms`);
    }
    this.#o = { ...o, leaseDurationMs, renewDeadlineMs, retryPeriodMs, random: o.random ?? Math.random };
  }

  get identity(): string {
    return this.#o.identity;
  }

  /** True from a successful acquire until leadership is lost or given up. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Campaigns, leads, and campaigns again after a loss, until `signal` aborts; then stops the
   * work, releases the lease if it is held, and resolves. Never rejects.
   */
  async run(lead: LeaderWork, signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error('LeaderElector.run called twice');
    this.#running = true;
    while (!signal.aborted) {
      const acquiredAt = await this.#acquire(signal);
      if (acquiredAt === undefined) break;
      await this.#lead(lead, acquiredAt, signal);
      if (signal.aborted) break;
      // Lost: stand by. A retry period first, so a failing lead() does not spin.
      await this.#o.clock.sleep(this.#o.retryPeriodMs, signal).catch(() => undefined);
    }
  }

  /** Retries until acquired (resolves with the monotonic start of the winning attempt) or aborted. */
  async #acquire(signal: AbortSignal): Promise<number | undefined> {
    const { clock, log, lock } = this.#o;
    log.info({ lease: lock.description, identity: this.#o.identity }, 'Attempting to acquire leader lease');
    for (;;) {
      const start = clock.monotonic();
      try {
        if (await this.#tryAcquireOrRenew(signal)) return start;
      } catch (err) {
        if (signal.aborted) return undefined;
        log.warn({ lease: lock.description, err: describeError(err) }, 'Error retrieving resource lock');
      }
      try {
        await clock.sleep(Math.min(jitter(this.#o.retryPeriodMs, JITTER_FACTOR, this.#o.random), this.#expiresInMs() + 1), signal);
      } catch (err) {
        if (isAbortError(err)) return undefined;
        throw err;
      }
    }
  }

  /** Leads from `acquiredAt` until leadership ends; returns after the work stopped and the lease was released. */
  async #lead(lead: LeaderWork, acquiredAt: number, stop: AbortSignal): Promise<void> {
    const { clock, log, lock, renewDeadlineMs, retryPeriodMs } = this.#o;
    this.#leading = true;
    log.info({ lease: lock.description, identity: this.#o.identity }, 'Successfully acquired lease');
    const leading = linkAbort(stop);
    const lose = (why: string): void => {
      if (leading.signal.aborted) return;
      // Not acting is what makes the election safe: flip the flag before anyone is told.
      this.#leading = false;
      log.warn({ lease: lock.description, why }, 'Leader election lost');
      leading.controller.abort(new Error(`leader election lost: ${why}`));
    };
    let cancelDeadline = clock.setTimer(acquiredAt + renewDeadlineMs - clock.monotonic(), () => lose('failed to renew the lease within the renew deadline'));
    const work = (async () => {
      try {
        await lead(leading.signal);
      } catch (err) {
        if (!leading.signal.aborted) log.error({ lease: lock.description, err: describeError(err) }, 'Leader work failed');
      }
      lose('the leader work ended');
    })();
    while (!leading.signal.aborted) {
      try {
        await clock.sleep(retryPeriodMs, leading.signal);
      } catch {
        break; // leadership ended while waiting
      }
      const start = clock.monotonic();
      let renewed = false;
      try {
        renewed = await this.#tryAcquireOrRenew(leading.signal);
      } catch (err) {
        if (leading.signal.aborted) break;
        log.warn({ lease: lock.description, err: describeError(err) }, 'Failed to renew lease; retrying');
      }
      if (leading.signal.aborted) break;
      if (renewed) {
        cancelDeadline();
        cancelDeadline = clock.setTimer(start + renewDeadlineMs - clock.monotonic(), () => lose('failed to renew the lease within the renew deadline'));
      } else if (this.#holder() !== this.#o.identity) {
        lose(`the lease is held by "${this.#holder()}"`);
      }
    }
    cancelDeadline();
    leading.dispose();
    this.#leading = false;
    await work;
    await this.#release();
  }

  /**
   * One attempt (client-go's tryAcquireOrRenew): create the lease when missing; otherwise take
   * or renew it unless another holder's record is still within its duration. False when held
   * or beaten by a concurrent write; throws on API errors.
   */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { clock, lock, identity } = this.#o;
    const now = rfc3339Micro(clock.now());
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    const current = await lock.get(signal);
    if (!current) {
      const spec: LeaseSpec = { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 };
      try {
        this.#observe(await lock.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {}, spec }, signal));
        return true;
      } catch (err) {
        if (hasCode(err, 'ERR_ALREADY_EXISTS')) return false;
        throw err;
      }
    }
    this.#observe(current);
    const old = current.spec ?? {};
    const holder = old.holderIdentity ?? '';
    const valid = this.#observedAt + (old.leaseDurationSeconds ?? 0) * 1000 > clock.monotonic();
    if (holder !== '' && holder !== identity && valid) return false;
    const mine = holder === identity;
    const spec: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: mine ? (old.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions: mine ? (old.leaseTransitions ?? 0) : (old.leaseTransitions ?? 0) + 1,
    };
    try {
      this.#observe(await lock.update({ ...current, spec }, signal));
      return true;
    } catch (err) {
      if (hasCode(err, 'ERR_CONFLICT')) return false;
      throw err;
    }
  }

  /** Gives the lease up (client-go's ReleaseOnCancel): holder empty, duration 1 s. Best effort. */
  async #release(): Promise<void> {
    const { clock, lock, log, identity } = this.#o;
    const held = this.#observed;
    if (!held || held.spec?.holderIdentity !== identity) return;
    const now = rfc3339Micro(clock.now());
    const deadline = new AbortController();
    const cancelTimer = clock.setTimer(RELEASE_TIMEOUT_MS, () => deadline.abort(new Error('release timed out')));
    try {
      const spec: LeaseSpec = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: held.spec.leaseTransitions ?? 0 };
      this.#observe(await lock.update({ ...held, spec }, deadline.signal));
      log.info({ lease: lock.description }, 'Released leader lease');
    } catch (err) {
      // A conflict means another elector wrote the lease since: it is not ours to release.
      log.warn({ lease: lock.description, err: describeError(err) }, 'Failed to release leader lease; it expires on its own');
    } finally {
      cancelTimer();
    }
  }

  #observe(lease: Lease): void {
    const key = JSON.stringify(lease.spec ?? {});
    if (key !== this.#observedKey) {
      const before = this.#observed?.spec?.holderIdentity;
      this.#observedKey = key;
      this.#observedAt = this.#o.clock.monotonic();
      const holder = lease.spec?.holderIdentity ?? '';
      if (holder !== (before ?? '') && holder !== '' && holder !== this.#o.identity) this.#o.log.info({ lease: this.#o.lock.description, holder }, 'New leader elected');
    }
    this.#observed = lease;
  }

  /** Until the observed lease is free by this elector's clock (Infinity when it is not held). */
  #expiresInMs(): number {
    const spec = this.#observed?.spec;
    if (!spec?.holderIdentity) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.#observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 - this.#o.clock.monotonic());
  }

  #holder(): string {
    return this.#observed?.spec?.holderIdentity ?? '';
  }
}
