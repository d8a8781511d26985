/**
 * The Services this node knows, from one informer over all namespaces: what pods' service
 * environment variables are made from (runtime/service-env.ts). A lister, as kubelet's
 * serviceLister: reads are from the cache and never wait for the API server.
 */
import { Informer, SERVICES, type ApiClient, type Service } from '@nodelet/api';
import type { Clock, Logger } from '@nodelet/base';

export class ServiceLister {
  readonly #informer: Informer<Service>;

  constructor(o: { api: ApiClient; clock: Clock; log: Logger }) {
    this.#informer = new Informer<Service>({ client: o.api, resource: SERVICES, clock: o.clock, logger: o.log });
  }

  start(): void {
    this.#informer.start();
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

  close(): Promise<void> {
    return this.#informer.close();
  }
}
