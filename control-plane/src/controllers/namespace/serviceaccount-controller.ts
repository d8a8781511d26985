/** Creates the `default` ServiceAccount in every active namespace, and re-creates it if deleted. */
import { NAMESPACES, SERVICEACCOUNTS, type ServiceAccount } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

export class ServiceAccountController extends ControllerBase {
  readonly #namespaces;
  readonly #accounts;

  constructor(d: ControllerDeps) {
    super(d, { name: 'serviceaccount' });
    this.#namespaces = this.watch(NAMESPACES, (n) => n.metadata.name ?? '', ['add', 'update']);
    this.#accounts = this.watch(SERVICEACCOUNTS, (sa: ServiceAccount) => (sa.metadata.name === DEFAULT_SERVICE_ACCOUNT && sa.metadata.namespace ? sa.metadata.namespace : undefined), ['delete']);
  }

  async reconcile(ns: string, signal: AbortSignal): Promise<void> {
    const namespace = this.#namespaces.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return;
    if (this.#accounts.get(`${ns}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    try {
      await this.client.resource(SERVICEACCOUNTS, ns).create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace: ns } }, { signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
    }
  }
}
