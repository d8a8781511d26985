/**
 * The resource a leader election is held in: one `coordination.k8s.io/v1` Lease (client-go's
 * LeaseLock). The elector only needs three calls, so tests give it an in-memory lock
 * (testing/memory-lease-lock.ts) with the same compare-and-swap rules as the API server: an
 * update carries the resourceVersion it read and fails with ERR_CONFLICT when the lease moved on.
 */
import { hasCode } from '@nodelet/base';
import { LEASES, type ApiClient, type Lease } from '@nodelet/api';

export interface LeaseLock {
  /** `namespace/name`, for logs. */
  readonly description: string;
  /** The lease, or undefined when it does not exist. */
  get(signal: AbortSignal): Promise<Lease | undefined>;
  /** Creates the lease; ERR_ALREADY_EXISTS when another elector was first. */
  create(lease: Lease, signal: AbortSignal): Promise<Lease>;
  /** Replaces the lease if `lease.metadata.resourceVersion` is current; ERR_CONFLICT otherwise. */
  update(lease: Lease, signal: AbortSignal): Promise<Lease>;
}

/** A {@link LeaseLock} on the API server, written with `client`'s credentials. */
export function apiLeaseLock(client: ApiClient, namespace: string, name: string): LeaseLock {
  return {
    description: `${namespace}/${name}`,
    async get(signal) {
      try {
        return await client.get<Lease>(LEASES, name, { namespace, signal });
      } catch (err) {
        if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
        throw err;
      }
    },
    create: (lease, signal) => client.create(LEASES, { ...lease, metadata: { ...lease.metadata, name, namespace } }, { namespace, signal }),
    update: (lease, signal) => client.update(LEASES, { ...lease, metadata: { ...lease.metadata, name, namespace } }, { namespace, signal }),
  };
}
