/**
 * RuntimeClass → CRI runtime handler for the pods this node runs (kubelet's runtimeclass
 * Manager), read from the agent's shared RuntimeClasses informer (source/informers.ts) when a
 * sandbox is created. A class the cache does not hold yet (created a moment ago) is read once
 * from the API server, so a pod admitted against it does not fail for the informer's lag. The
 * informer's owner starts and closes it.
 */
import { RUNTIMECLASSES, type ApiClient, type Informer, type Pod, type RuntimeClass } from '@nodelet/api/agent';
import { AgentError, hasCode } from '@nodelet/base';

export class RuntimeClassManager {
  readonly #informer: Informer<RuntimeClass>;
  readonly #api: ApiClient;

  constructor(o: { api: ApiClient; informer: Informer<RuntimeClass> }) {
    this.#api = o.api;
    this.#informer = o.informer;
  }

  /**
   * The handler of the pod's `runtimeClassName`; `''` (the runtime's default) when it names none.
   * Throws ERR_NOT_FOUND (`runtimeclass.node.k8s.io "x" not found`) for a class that does not
   * exist, ERR_UNAVAILABLE (retryable) when the API server cannot say.
   */
  async handlerFor(pod: Pod, signal: AbortSignal): Promise<string> {
    const name = pod.spec?.runtimeClassName;
    if (!name) return '';
    const cached = this.#informer.get(name);
    if (cached) return cached.handler;
    try {
      return (await this.#api.resource(RUNTIMECLASSES).get(name, { signal })).handler;
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) throw new AgentError('ERR_NOT_FOUND', `runtimeclass.node.k8s.io "${name}" not found`, { cause: err });
      throw new AgentError('ERR_UNAVAILABLE', `failed to lookup RuntimeClass ${name}`, { cause: err, retryable: true });
    }
  }
}
