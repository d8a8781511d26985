/**
 * The node Lease in `kube-node-lease` (component-helpers lease controller): created on first
 * renewal, then `spec.renewTime` updated every `leaseDuration × 0.25` (10 s for 40 s). A failed
 * renewal retries with backoff 200 ms doubling to 7 s; a conflict re-reads the lease.
 */
import { Backoff, describeError, hasCode, type Clock, type Logger } from '@nodelet/base';
import { LEASES, type ApiClient, type Lease } from '@nodelet/api/agent';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

export interface NodeLeaseOptions {
  api: ApiClient;
  nodeName: string;
  durationSeconds: number;
  clock: Clock;
  log: Logger;
  nodeUid?: () => string | undefined;
}

/** MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class NodeLease {
  readonly #o: NodeLeaseOptions;
  #lease?: Lease;
  #lastRenew = 0;

  constructor(o: NodeLeaseOptions) {
    this.#o = o;
  }

  get lastRenew(): number {
    return this.#lastRenew;
  }

  /** One renewal (create when missing). Throws on failure. */
  async renew(signal: AbortSignal): Promise<void> {
    const { api, nodeName } = this.#o;
    const now = microTime(this.#o.clock.now());
    if (!this.#lease) {
      try {
        this.#lease = await api.get(LEASES, nodeName, { namespace: NODE_LEASE_NAMESPACE, signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
        const uid = this.#o.nodeUid?.();
        this.#lease = await api.create(
          LEASES,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: nodeName, namespace: NODE_LEASE_NAMESPACE, ...(uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid }] } : {}) },
            spec: { holderIdentity: nodeName, leaseDurationSeconds: this.#o.durationSeconds, renewTime: now },
          },
          { namespace: NODE_LEASE_NAMESPACE, signal },
        );
        this.#lastRenew = this.#o.clock.now();
        return;
      }
    }
    const next: Lease = { ...this.#lease, spec: { ...this.#lease.spec, holderIdentity: nodeName, leaseDurationSeconds: this.#o.durationSeconds, renewTime: now } };
    try {
      this.#lease = await api.update(LEASES, next, { namespace: NODE_LEASE_NAMESPACE, signal });
      this.#lastRenew = this.#o.clock.now();
    } catch (err) {
      if (hasCode(err, 'ERR_CONFLICT') || hasCode(err, 'ERR_NOT_FOUND')) this.#lease = undefined;
      throw err;
    }
  }

  /**
   * Renews every `durationSeconds / 4` until `signal` aborts; a failed renewal is retried after
   * the backoff (never later than the renew interval). Resolves when stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    const interval = this.#o.durationSeconds * 250;
    const backoff = new Backoff({ initialMs: 200, maxMs: 7000, clock: this.#o.clock });
    while (!signal.aborted) {
      let wait = interval;
      try {
        await this.renew(signal);
        backoff.reset();
      } catch (err) {
        if (signal.aborted) return;
        wait = Math.min(interval, backoff.next());
        this.#o.log.warn({ err: describeError(err), retryInMs: wait }, 'Node lease renewal failed');
      }
      await this.#o.clock.sleep(wait, signal).catch(() => undefined); // rejects only when aborted; the loop checks the signal
    }
  }
}
