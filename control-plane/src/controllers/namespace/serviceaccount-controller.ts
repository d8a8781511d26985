/** Creates the `default` ServiceAccount in every active namespace, and re-creates it if deleted. */
import { NAMESPACES, SERVICEACCOUNTS, type ApiClient, type ServiceAccount } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type SharedInformers } from '../runtime.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

export interface ServiceAccountDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
}

export class ServiceAccountController implements Controller {
  readonly name = 'serviceaccount';
  readonly queue;
  readonly #d: ServiceAccountDeps;
  readonly #namespaces;
  readonly #accounts;

  constructor(d: ServiceAccountDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#namespaces = d.informers.for(NAMESPACES);
    this.#accounts = d.informers.for(SERVICEACCOUNTS);
    this.#namespaces.on({ onAdd: (n) => this.queue.add(n.metadata.name ?? ''), onUpdate: (_o, n) => this.queue.add(n.metadata.name ?? '') });
    this.#accounts.on({
      onDelete: (sa: ServiceAccount) => {
        if (sa.metadata.name === DEFAULT_SERVICE_ACCOUNT && sa.metadata.namespace) this.queue.add(sa.metadata.namespace);
      },
    });
  }

  async reconcile(ns: string, signal: AbortSignal): Promise<void> {
    const namespace = this.#namespaces.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return;
    if (this.#accounts.get(`${ns}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    try {
      await this.#d.client.resource(SERVICEACCOUNTS, ns).create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace: ns } }, { signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
    }
  }
}
