/**
 * The agent's informers: one per resource (and selector), shared by everything in the agent
 * that reads it — pod configuration, the pods' service variables, the service proxy and the
 * cluster DNS resolver — so each object is listed and watched once per node, not once per reader
 * (client-go's SharedInformerFactory).
 *
 *   informers.services() ──┬──▶ ServiceLister (service env vars)
 *                          ├──▶ ServiceProxy
 *                          └──▶ NodeDns
 *   informers.runtimeClasses() ──▶ RuntimeClassManager (sandbox runtime handler)
 *
 * An informer is created on first use and started at once when the factory already runs
 * (`start()`), else by `start()`; readers may call `start()` on it again (idempotent). Readers
 * only subscribe: the factory's owner (the agent) closes them all, after the readers.
 */
import type { Clock, Logger } from '@nodelet/base';
import {
  ENDPOINTSLICES,
  InformerFactory,
  type Informer,
  NAMESPACES,
  NETWORKPOLICIES,
  NODES,
  PODS,
  RUNTIMECLASSES,
  SERVICES,
  type ApiClient,
  type EndpointSlice,
  type KubeObject,
  type Namespace,
  type NetworkPolicy,
  type Node,
  type Pod,
  type ResourceType,
  type RuntimeClass,
  type Service,
} from '@nodelet/api/agent';

export interface SharedInformersOptions {
  api: ApiClient;
  /** This node: the selectors of `nodePods()` and `node()`. */
  nodeName: string;
  clock: Clock;
  log: Logger;
}

export class SharedInformers {
  readonly #o: SharedInformersOptions;
  readonly #factory: InformerFactory;

  constructor(o: SharedInformersOptions) {
    this.#o = o;
    this.#factory = new InformerFactory({ client: o.api, clock: o.clock, logger: o.log });
  }

  /** Services of all namespaces. */
  services(): Informer<Service> {
    return this.#get(SERVICES);
  }

  /** EndpointSlices of all namespaces. */
  endpointSlices(): Informer<EndpointSlice> {
    return this.#get(ENDPOINTSLICES);
  }

  namespaces(): Informer<Namespace> {
    return this.#get(NAMESPACES);
  }

  /** Pods of all nodes (the DNS resolver's verified pod records). */
  pods(): Informer<Pod> {
    return this.#get(PODS);
  }

  /** The pods bound to this node (`spec.nodeName=<node>`): the API pod source. */
  nodePods(): Informer<Pod> {
    return this.#get(PODS, `spec.nodeName=${this.#o.nodeName}`);
  }

  /** This node's Node object (`metadata.name=<node>`). */
  node(): Informer<Node> {
    return this.#get(NODES, `metadata.name=${this.#o.nodeName}`);
  }

  /** Every Node: the pod route manager's peers (network/route-manager.ts). */
  nodes(): Informer<Node> {
    return this.#get(NODES);
  }

  /** NetworkPolicies of all namespaces (netpol/enforcer.ts). */
  networkPolicies(): Informer<NetworkPolicy> {
    return this.#get(NETWORKPOLICIES);
  }

  /** RuntimeClasses: the runtime handler of new sandboxes (source/runtime-classes.ts). */
  runtimeClasses(): Informer<RuntimeClass> {
    return this.#get(RUNTIMECLASSES);
  }

  /** Starts every informer made so far, and from now on each one as it is made. Idempotent. */
  start(): void {
    this.#factory.start();
  }

  /** Closes every informer (their readers must be closed first). Idempotent. */
  close(): Promise<void> {
    return this.#factory.close();
  }

  #get<T extends KubeObject>(resource: ResourceType<T>, fieldSelector?: string): Informer<T> {
    return this.#factory.for(resource, { fieldSelector });
  }
}
