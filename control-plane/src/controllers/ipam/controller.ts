/**
 * Node IPAM controller: gives every node a pod CIDR (`spec.podCIDR`, `spec.podCIDRs`) from the
 * cluster CIDR, a /24 each by default, and frees it when the node is deleted. One worker, so
 * the allocator needs no locking; its state is rebuilt from the nodes at start.
 */
import { NODES } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { CidrAllocator, DEFAULT_CLUSTER_CIDR, DEFAULT_NODE_MASK } from './cidr-allocator.js';

export class NodeIpamController extends ControllerBase {
  readonly #nodes;
  readonly #alloc: CidrAllocator;
  /** node name → the CIDR we know it holds (to release it on delete) */
  readonly #held = new Map<string, string>();
  #initialised = false;

  constructor(d: ControllerDeps) {
    super(d, { name: 'nodeipam', workers: 1, eventComponent: 'cidrAllocator' });
    this.#alloc = new CidrAllocator(d.options.clusterCidr ?? DEFAULT_CLUSTER_CIDR, d.options.nodeCidrMaskSize ?? DEFAULT_NODE_MASK);
    this.#nodes = this.informer(NODES);
    this.handle(this.#nodes, {
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
        this.log.info({ node: name, podCIDR: held }, 'Released pod CIDR of deleted node');
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
      this.log.error({ node: name, podCIDR: cidr, owner }, 'Node has a pod CIDR that cannot be allocated to it');
      await this.event(node, 'Warning', 'CIDRNotAvailable', `Node ${name} has spec.podCIDR ${cidr}, but ${why}; pods on it may collide: remove the node and let the IPAM controller assign one`);
      return;
    }
    const cidr = held ?? this.#alloc.allocate();
    if (!cidr) {
      await this.event(node, 'Normal', 'CIDRNotAvailable', `Node ${name} status is now: CIDRNotAvailable`);
      throw new Error(`no pod CIDR left in the cluster CIDR for node "${name}"; widen --cluster-cidr or delete unused nodes`);
    }
    this.#held.set(name, cidr);
    try {
      await this.client.resource(NODES).patch(name, { spec: { podCIDR: cidr, podCIDRs: [cidr] } }, { type: 'merge', signal });
      this.log.info({ node: name, podCIDR: cidr }, 'Assigned pod CIDR');
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
