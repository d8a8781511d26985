/**
 * The service load balancer (as k3s's ServiceLB or MetalLB's controller for a lab): gives every
 * `type: LoadBalancer` Service without a `spec.loadBalancerClass` an address in
 * `status.loadBalancer.ingress` — one from the pool (`--service-lb-pool`), or, without a pool,
 * the InternalIPs of the ready nodes that do not carry `node.kubernetes.io/exclude-from-external-load-balancers`.
 * The agents' service proxies answer for those addresses (docs/network.md "LoadBalancer addresses").
 *
 *   Service add/update/delete ─▶ key ─▶ reconcile: want an address? ─▶ keep / assign / release ─▶ status
 *   Node add/update/delete (node-IP mode) ─▶ every LoadBalancer Service
 *
 * One worker: the pool is in-memory state. Before the first reconcile it is filled from the
 * statuses already written (the informer's cache), so a restart keeps every assignment.
 * Acts as kube-system/service-controller.
 */
import { NODES, SERVICES, type Node, type Service } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { keyOf, splitKey } from '../util/pods.js';
import { AddressPool } from './pool.js';

/** Upstream's label that keeps a node out of load balancers (service controller). */
export const EXCLUDE_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';

type Ingress = NonNullable<NonNullable<Service['status']>['loadBalancer']>['ingress'];

/** Whether this controller owns `svc`'s load balancer: type LoadBalancer and no class of another implementation. */
export function ownsLoadBalancer(svc: Service): boolean {
  return svc.spec?.type === 'LoadBalancer' && !svc.spec.loadBalancerClass && !svc.metadata.deletionTimestamp;
}

/** The addresses of the nodes that take load-balancer traffic in node-IP mode, sorted. */
export function nodeIngressIPs(nodes: readonly Node[]): string[] {
  const ips = new Set<string>();
  for (const n of nodes) {
    if (n.metadata.labels?.[EXCLUDE_LB_LABEL] !== undefined) continue;
    if (!n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
    const ip = n.status.addresses?.find((a) => a.type === 'InternalIP' && /^\d+\.\d+\.\d+\.\d+$/.test(a.address))?.address;
    if (ip) ips.add(ip);
  }
  return [...ips].sort();
}

const sameIngress = (a: Ingress, b: Ingress): boolean => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

export class ServiceLoadBalancerController extends ControllerBase {
  readonly #services;
  readonly #nodes;
  readonly #pool: AddressPool | undefined;
  #seeded = false;

  constructor(d: ControllerDeps) {
    super(d, { name: 'servicelb', workers: 1, eventComponent: 'service-controller' });
    this.#pool = d.options.serviceLbPool ? new AddressPool(d.options.serviceLbPool) : undefined;
    this.#services = this.watch(SERVICES);
    this.#nodes = this.informer(NODES);
    if (!this.#pool) {
      const all = (): void => {
        for (const s of this.#services.list()) if (ownsLoadBalancer(s)) this.enqueue(keyOf(s));
      };
      this.handle(this.#nodes, { onAdd: all, onUpdate: (o, n) => nodeIngressIPs([o]).join() !== nodeIngressIPs([n]).join() && all(), onDelete: all });
    }
  }

  /** Re-claims every address the cached statuses show, oldest Service first (it wins a conflict). */
  #seed(): void {
    if (this.#seeded || !this.#pool) return;
    this.#seeded = true;
    const owned = this.#services.list().filter(ownsLoadBalancer);
    owned.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || keyOf(a).localeCompare(keyOf(b)));
    for (const s of owned) {
      const ip = s.status?.loadBalancer?.ingress?.find((i) => i.ip && this.#pool!.contains(i.ip))?.ip;
      if (ip) this.#pool.claim(keyOf(s), ip);
    }
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    this.#seed();
    const svc = this.#services.get(key);
    if (!svc || !ownsLoadBalancer(svc)) {
      this.#pool?.release(key);
      // A Service that stopped being a LoadBalancer loses its address (upstream clears the
      // status too); one handed to another class keeps what that class writes.
      if (svc && svc.spec?.type !== 'LoadBalancer' && svc.status?.loadBalancer?.ingress?.length) await this.#write(svc, undefined, signal);
      return;
    }
    let want: Ingress;
    if (this.#pool) {
      const ip = this.#pool.assign(key);
      if (!ip) {
        await this.event(svc, 'Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: no address left in the service load-balancer pool (${this.#pool.size} addresses)`);
        return { requeueAfterMs: 30_000 };
      }
      want = [{ ip, ipMode: 'VIP' }];
    } else {
      want = nodeIngressIPs(this.#nodes.list()).map((ip) => ({ ip, ipMode: 'VIP' as const }));
    }
    if (sameIngress(svc.status?.loadBalancer?.ingress, want)) return;
    await this.#write(svc, want, signal);
    void this.event(svc, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
  }

  async #write(svc: Service, ingress: Ingress, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(keyOf(svc));
    const status = { ...(svc.status ?? {}), loadBalancer: ingress?.length ? { ingress } : {} };
    try {
      await this.client.resource(SERVICES, namespace).updateStatus({ ...svc, metadata: { ...svc.metadata, name }, status }, { signal });
    } catch (err) {
      // A conflict means a newer Service is on its way through the informer: it is reconciled then.
      if (!hasCode(err, 'ERR_CONFLICT') && !hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
}
