/**
 * The soak's API writes (churn and the ledger's ConfigMaps), each recorded in the ledger with
 * whether the server acknowledged it. A failed write is not retried here: the plan goes on, and
 * the ledger knows the write may or may not have happened.
 */
import { hasCode, type ErrorCode } from '@nodelet/base';
import { CONFIGMAPS, DEPLOYMENTS, NAMESPACES, PODS, SERVICES, type ApiClient } from '@nodelet/api';
import type { Ledger } from './ledger.js';
import type { ChurnAction, DeploymentName } from './plan.js';
import { deployment, ledgerConfigMap, namespace, pod, service, SOAK_NAMESPACE } from './workloads.js';

export interface WriterOptions {
  api: ApiClient;
  ledger: Ledger;
  busybox: string;
  registry: string;
}

export class SoakWriter {
  readonly #o: WriterOptions;
  readonly created = { pods: 0, services: 0 };
  readonly #replicas = new Map<DeploymentName, number>();

  constructor(o: WriterOptions) {
    this.#o = o;
  }

  /** The namespace and the four deployments (at 0 replicas); idempotent. */
  async setUp(): Promise<void> {
    const { api } = this.#o;
    await api.create(NAMESPACES, namespace()).catch(ignore('ERR_ALREADY_EXISTS'));
    for (const name of ['web', 'probed', 'crashy', 'burst'] as const) {
      await api.create(DEPLOYMENTS, deployment(name, 0, this.#o.busybox, this.#o.registry)).catch(ignore('ERR_ALREADY_EXISTS'));
      await this.scale(name, 0);
    }
  }

  replicas(name: DeploymentName): number {
    return this.#replicas.get(name) ?? 0;
  }

  /** Applies one churn action; true when the server acknowledged it. */
  async apply(a: ChurnAction): Promise<boolean> {
    const { api, busybox, registry } = this.#o;
    const ns = { namespace: SOAK_NAMESPACE, timeoutMs: 15_000 };
    switch (a.op) {
      case 'scale':
        return this.scale(a.deployment, a.replicas);
      case 'create-pod':
        return this.#write('pods', a.name, { exists: true }, async () => {
          await api.create(PODS, pod(a.name, a.kind, busybox, registry, a.hostPort), ns);
          this.created.pods++;
        });
      case 'delete-pod':
        return this.#write('pods', a.name, { exists: false }, () => api.delete(PODS, a.name, ns).catch(ignore('ERR_NOT_FOUND')));
      case 'create-service':
        return this.#write('services', a.name, { exists: true }, async () => {
          await api.create(SERVICES, service(a.name, a.target), ns);
          this.created.services++;
        });
      case 'delete-service':
        return this.#write('services', a.name, { exists: false }, () => api.delete(SERVICES, a.name, ns).catch(ignore('ERR_NOT_FOUND')));
    }
  }

  async scale(name: DeploymentName, replicas: number): Promise<boolean> {
    const ok = await this.#write('deployments', name, { exists: true, replicas }, () =>
      this.#o.api.patch(DEPLOYMENTS, name, { spec: { replicas } }, { type: 'merge', namespace: SOAK_NAMESPACE, timeoutMs: 15_000 }),
    );
    if (ok) this.#replicas.set(name, replicas);
    return ok;
  }

  /** One ledger ConfigMap write: created at seq 0, then patched to each next seq. */
  async ledgerWrite(name: string, seq: number, signal?: AbortSignal): Promise<boolean> {
    const { api } = this.#o;
    return this.#write('configmaps', name, { exists: true, seq }, () =>
      seq === 0
        ? api.create(CONFIGMAPS, ledgerConfigMap(name, 0), { namespace: SOAK_NAMESPACE, signal, timeoutMs: 5_000 })
        : api.patch(CONFIGMAPS, name, { data: { seq: String(seq) } }, { type: 'merge', namespace: SOAK_NAMESPACE, signal, timeoutMs: 5_000 }),
    );
  }

  async #write(resource: Parameters<Ledger['record']>[0], name: string, expect: Parameters<Ledger['record']>[2], fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      this.#o.ledger.record(resource, name, expect, true);
      return true;
    } catch {
      // The server may have applied it before dying: the ledger accepts either outcome.
      this.#o.ledger.record(resource, name, expect, false);
      return false;
    }
  }
}

function ignore(code: ErrorCode): (err: unknown) => void {
  return (err) => {
    if (!hasCode(err, code)) throw err;
  };
}
