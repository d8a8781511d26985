/**
 * Node IPAM controller: gives every node a pod CIDR (`spec.podCIDR`, `spec.podCIDRs`) from the
 * cluster CIDR, a /24 each by default, and frees it when the node is deleted. One worker, so
 * the allocator needs no locking; its state is rebuilt from the nodes at start.
 */
import { EventRecorder, NODES, type ApiClient } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { newQueue, type Controller, type SharedInformers } from '../runtime.js';
import { CidrAllocator, DEFAULT_CLUSTER_CIDR, DEFAULT_NODE_MASK } from './cidr-allocator.js';

export interface NodeIpamDeps {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  logger: Logger;
  options: { clusterCidr?: string; nodeCidrMaskSize?: number };
}

export class NodeIpamController implements Controller {
  readonly name = 'nodeipam';
  readonly queue;
  readonly workers = 1;
  readonly #d: NodeIpamDeps;
  readonly #nodes;
  readonly #alloc: CidrAllocator;
  /** node name → the CIDR we know it holds (to release it on delete) */
  readonly #held = new Map<string, string>();
  readonly #events: EventRecorder;
  #initialised = false;

  constructor(d: NodeIpamDeps) {
    this.#d = d;
    this.queue = newQueue(d.clock);
    this.#alloc = new CidrAllocator(d.options.clusterCidr ?? DEFAULT_CLUSTER_CIDR, d.options.nodeCidrMaskSize ?? DEFAULT_NODE_MASK);
    this.#events = new EventRecorder({ client: d.client, component: 'cidrAllocator', clock: d.clock, logger: d.logger });
    this.#nodes = d.informers.for(NODES);
    this.#nodes.on({
      onAdd: (n) => this.queue.add(n.metadata.name ?? ''),
      onUpdate: (o, n) => {
        if (o.spec?.podCIDR !== n.spec?.podCIDR || !n.spec?.podCIDR) this.queue.add(n.metadata.name ?? '');
      },
      onDelete: (n) => this.queue.add(n.metadata.name ?? ''),
    });
  }

  /** Occupies every CIDR already assigned before allocating anything (restart safety). */
  #init(): void {
    if (this.#initialised) return;
    this.#initialised = true;
    for (const n of this.#nodes.list()) {
      const cidr = n.spec?.podCIDR;
      if (cidr && this.#alloc.occupy(cidr)) this.#held.set(n.metadata.name ?? '', cidr);
    }
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    this.#init();
    const node = this.#nodes.get(name);
    const held = this.#held.get(name);
    if (!node) {
      if (held) {
        this.#alloc.release(held);
        this.#held.delete(name);
        this.#d.logger.info({ node: name, podCIDR: held }, 'Released pod CIDR of deleted node');
      }
      return;
    }
    if (node.spec?.podCIDR) {
      const cidr = node.spec.podCIDR;
      if (held === cidr) return;
      if (this.#alloc.occupy(cidr)) {
        if (held) this.#alloc.release(held);
        this.#held.set(name, cidr);
        return;
      }
      // Set by someone else to a CIDR that is taken (or outside the cluster CIDR): never hand it
      // out twice; say so loudly — the two nodes' pods would share addresses.
      const owner = [...this.#held].find(([, c]) => c === cidr)?.[0];
      const why = owner ? `it is already assigned to node "${owner}"` : `it is not a free /${this.#alloc.maskSize} of the cluster CIDR`;
      this.#d.logger.error({ node: name, podCIDR: cidr, owner }, 'Node has a pod CIDR that cannot be allocated to it');
      await this.#events.record(node, 'Warning', 'CIDRNotAvailable', `Node ${name} has spec.podCIDR ${cidr}, but ${why}; pods on it may collide: remove the node and let the IPAM controller assign one`);
      return;
    }
    const cidr = held ?? this.#alloc.allocate();
    if (!cidr) {
      await this.#events.record(node, 'Normal', 'CIDRNotAvailable', `Node ${name} status is now: CIDRNotAvailable`);
      throw new Error(`no pod CIDR left in the cluster CIDR for node "${name}"; widen --cluster-cidr or delete unused nodes`);
    }
    this.#held.set(name, cidr);
    try {
      await this.#d.client.resource(NODES).patch(name, { spec: { podCIDR: cidr, podCIDRs: [cidr] } }, { type: 'merge', signal });
      this.#d.logger.info({ node: name, podCIDR: cidr }, 'Assigned pod CIDR');
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) {
        this.#alloc.release(cidr);
        this.#held.delete(name);
        return;
      }
      throw err; // keep it held for this node; the retry patches the same CIDR
    }
  }
}
