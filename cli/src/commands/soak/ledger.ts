/**
 * The ledger of acknowledged API writes: every create, update and delete the soak made, what the
 * server answered, and — for a write whose answer never came (the server died under it) — what it
 * would have made. After a server kill the ledger is compared with what the server serves: an
 * acknowledged write must be there; an unacknowledged one may or may not be.
 */
import { hasCode } from '@nodelet/base';
import { CONFIGMAPS, DEPLOYMENTS, PODS, SERVICES, type ApiClient, type KubeObject, type ResourceType } from '@nodelet/api';
import { SOAK_NAMESPACE } from './workloads.js';

export type LedgerResource = 'pods' | 'deployments' | 'services' | 'configmaps';

/** What an object looks like after a write: gone, or there with the fields the soak sets. */
export type Expect = { exists: false } | { exists: true; replicas?: number; seq?: number };

interface Entry {
  acked?: Expect;
  /** A write after `acked` whose answer never came. */
  inflight?: Expect;
}

const RESOURCES: Record<LedgerResource, ResourceType<KubeObject>> = {
  pods: PODS as ResourceType<KubeObject>,
  deployments: DEPLOYMENTS as ResourceType<KubeObject>,
  services: SERVICES as ResourceType<KubeObject>,
  configmaps: CONFIGMAPS as ResourceType<KubeObject>,
};

export class Ledger {
  readonly #entries = new Map<string, Entry>();
  acked = 0;
  unacked = 0;

  /** Records one write and whether the server acknowledged it. */
  record(resource: LedgerResource, name: string, expect: Expect, acked: boolean): void {
    const key = `${resource}/${name}`;
    const e = this.#entries.get(key) ?? {};
    if (acked) {
      e.acked = expect;
      e.inflight = undefined;
      this.acked++;
    } else {
      e.inflight = expect;
      this.unacked++;
    }
    this.#entries.set(key, e);
  }

  /** The last acknowledged state of an object, if any. */
  expected(resource: LedgerResource, name: string): Expect | undefined {
    return this.#entries.get(`${resource}/${name}`)?.acked;
  }

  /** Reads back every object with an acknowledged write; returns one line per lost write. */
  async verify(api: ApiClient, signal?: AbortSignal): Promise<string[]> {
    const problems: string[] = [];
    for (const [key, e] of this.#entries) {
      if (!e.acked) continue;
      const [resource, name] = key.split('/') as [LedgerResource, string];
      let obj: (KubeObject & { spec?: { replicas?: number }; data?: Record<string, string> }) | undefined;
      try {
        obj = await api.get(RESOURCES[resource], name, { namespace: SOAK_NAMESPACE, signal, timeoutMs: 10_000 });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
      }
      const matches = (x: Expect | undefined): boolean => {
        if (!x) return false;
        if (!x.exists) return !obj || (resource === 'pods' && !!obj.metadata?.deletionTimestamp);
        if (!obj) return false;
        if (x.replicas !== undefined && obj.spec?.replicas !== x.replicas) return false;
        if (x.seq !== undefined && obj.data?.seq !== String(x.seq)) return false;
        return true;
      };
      if (matches(e.acked) || matches(e.inflight)) continue;
      const saw = !obj ? 'it is gone' : obj.spec?.replicas !== undefined ? `replicas=${obj.spec.replicas}` : obj.data?.seq !== undefined ? `seq=${obj.data.seq}` : 'it exists';
      problems.push(`acknowledged ${describe(e.acked)} of ${key} is lost: ${saw}`);
    }
    return problems;
  }
}

function describe(x: Expect): string {
  if (!x.exists) return 'delete';
  if (x.replicas !== undefined) return `scale to ${x.replicas}`;
  if (x.seq !== undefined) return `write seq=${x.seq}`;
  return 'create';
}
