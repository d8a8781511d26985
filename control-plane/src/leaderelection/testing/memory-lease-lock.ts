/**
 * An in-memory {@link LeaseLock} for unit tests: one shared lease, the API server's
 * compare-and-swap on resourceVersion, and switches to make calls fail or hang, so tests can
 * cut a leader off from the "API server" while its standby still reaches it.
 */
import { AgentError, abortError } from '@nodelet/base';
import type { Lease } from '@nodelet/api';
import type { LeaseLock } from '../lease-lock.js';

export class MemoryLeaseStore {
  lease?: Lease;
  #rv = 0;
  /** Every successful write, in order (for assertions on leaseTransitions and holders). */
  readonly writes: Lease[] = [];

  /** A lock on this lease; `behaviour` decides per call whether that client reaches the store. */
  lock(behaviour: { mode: 'ok' | 'fail' | 'hang' } = { mode: 'ok' }): LeaseLock & { behaviour: { mode: 'ok' | 'fail' | 'hang' } } {
    const reach = async <T>(signal: AbortSignal, fn: () => T): Promise<T> => {
      if (behaviour.mode === 'fail') throw new AgentError('ERR_UNAVAILABLE', 'connection refused');
      if (behaviour.mode === 'hang') {
        await new Promise<never>((_, reject) => {
          if (signal.aborted) reject(abortError(signal.reason));
          signal.addEventListener('abort', () => reject(abortError(signal.reason)), { once: true });
        });
      }
      signal.throwIfAborted();
      return fn();
    };
    return {
      behaviour,
      description: 'kube-system/test',
      get: (signal) => reach(signal, () => (this.lease ? structuredClone(this.lease) : undefined)),
      create: (lease, signal) =>
        reach(signal, () => {
          if (this.lease) throw new AgentError('ERR_ALREADY_EXISTS', 'lease exists');
          return this.#write(lease);
        }),
      update: (lease, signal) =>
        reach(signal, () => {
          if (!this.lease) throw new AgentError('ERR_NOT_FOUND', 'no lease');
          if (lease.metadata.resourceVersion !== this.lease.metadata.resourceVersion) throw new AgentError('ERR_CONFLICT', 'the object has been modified');
          return this.#write(lease);
        }),
    };
  }

  #write(lease: Lease): Lease {
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, name: 'test', namespace: 'kube-system', resourceVersion: String(++this.#rv) } };
    this.writes.push(structuredClone(this.lease));
    return structuredClone(this.lease);
  }
}
