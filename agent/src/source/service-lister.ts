/**
 * The Services this node knows, read from the agent's shared Services informer
 * (source/informers.ts): what pods' service environment variables are made from
 * (runtime/service-env.ts). A lister, as kubelet's serviceLister: reads are from the cache and
 * never wait for the API server. The informer's owner starts and closes it.
 */
import type { Informer, Service } from '@nodelet/api/agent';

export class ServiceLister {
  readonly #informer: Informer<Service>;

  constructor(informer: Informer<Service>) {
    this.#informer = informer;
  }

  get synced(): boolean {
    return this.#informer.hasSynced();
  }

  /** Waits (bounded by `signal`) until the first list arrived. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#informer.waitForSync(signal);
  }

  inNamespace(namespace: string): Service[] {
    return this.#informer.list().filter((s) => s.metadata.namespace === namespace);
  }

  get(namespace: string, name: string): Service | undefined {
    return this.#informer.get(`${namespace}/${name}`);
  }
}
