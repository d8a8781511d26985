/**
 * Registers the Node and keeps its status current (kubelet kubelet_node_status.go):
 *
 *   register: create Node (labels, status) ── 409 → adopt it (labels merged), keep going;
 *             failures retried with backoff (200 ms doubling to 7 s)
 *   nodeStatusUpdateFrequency after each update ends, and at once on `poke()` (a change the node
 *   should report now: runtime health, the pod CIDR) or `wake()` (the image list changed): compute
 *   status, merge-patch nodes/<n>/status
 *   every read of the Node: spec.podCIDR (or the configured one) → onPodCIDR (drives the CNI chain)
 *   the Node as watched (`watchNode`): its spec.podCIDR at once, as kubelet's fast status update
 *   does at start (its Node lister, polled every 100 ms until ready): the IPAM controller assigns
 *   the CIDR just after registration, and the node would otherwise wait a whole status period
 *   NotReady for it
 */
import { Backoff, abortError, describeError, hasCode, isAbortError, type Clock, type Disposable, type Logger, type PeriodicJob } from '@nodelet/base';
import { join } from 'node:path';
import { LOCAL_PATH_DIR_ANNOTATION, NODES, type ApiClient, type Node, type NodeStatus } from '@nodelet/api/agent';
import { computeNodeStatus, type RuntimeHealth } from './node-status.js';
import { nodeStatusImages, type ListedImage } from './node-images.js';
import type { MachineInfo } from './machine-info.js';
import { MachineInfoCache } from './machine-info-cache.js';
import type { AgentConfig } from '../config/config.js';

export interface NodeReporterOptions {
  api: ApiClient;
  config: AgentConfig;
  clock: Clock;
  log: Logger;
  internalIP: string;
  agentVersion: string;
  /** The node API's bound port (daemonEndpoints.kubeletEndpoint.Port). */
  nodeApiPort(): number;
  health(signal: AbortSignal): Promise<RuntimeHealth>;
  onPodCIDR(cidr: string): void;
  /** The pressure conditions that are True (the eviction manager's); none when unset. */
  pressure?(): ReadonlySet<string>;
  /** The runtime's images (image-inventory.ts), for status.images; none when unset. */
  images?(): readonly ListedImage[];
  /** Calls `seen` with this node's Node whenever a watch of it sees a change (the agent's shared informer); until disposed. */
  watchNode?(seen: (n: Node) => void): Disposable;
}

export class NodeReporter {
  readonly #o: NodeReporterOptions;
  readonly #machine: MachineInfoCache;
  readonly #registeredWaiters = new Set<(n: Node) => void>();
  #job?: PeriodicJob;
  #poked = false;
  #node?: Node;
  #lastStatus?: NodeStatus;
  /** When the status was last written (a skipped update does not count). */
  #lastReportMs = 0;
  /** A poke asks for a write even when the status looks the same (the change may be elsewhere, e.g. the pod CIDR). */
  #pokedSinceReport = false;
  #podCIDR?: string;
  /** The Node's own spec.podCIDR has been seen (a configured --pod-cidr stands in until then). */
  #nodeHasPodCIDR = false;

  constructor(o: NodeReporterOptions) {
    this.#o = o;
    this.#machine = new MachineInfoCache({ rootDir: o.config.rootDir, clock: o.clock, log: o.log });
  }

  get node(): Node | undefined {
    return this.#node;
  }

  get machine(): MachineInfo | undefined {
    return this.#machine.current;
  }

  get lastStatus(): NodeStatus | undefined {
    return this.#lastStatus;
  }

  /** Asks for a status update now (runtime health changed); before registration, right after it. */
  poke(): void {
    this.#pokedSinceReport = true;
    if (this.#job) this.#job.trigger();
    else this.#poked = true;
  }

  /**
   * Asks for a status computation now, written only if the status changed (or the report is due):
   * for a change inside the status itself, such as the image list. Before registration, right after it.
   */
  wake(): void {
    if (this.#job) this.#job.trigger();
    else this.#poked = true;
  }

  /** Resolves with the Node once it is registered; rejects with an AbortError when `signal` aborts first. */
  registered(signal?: AbortSignal): Promise<Node> {
    if (this.#node) return Promise.resolve(this.#node);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal.reason));
      const onAbort = (): void => {
        this.#registeredWaiters.delete(waiter);
        reject(abortError(signal?.reason));
      };
      const waiter = (n: Node): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(n);
      };
      this.#registeredWaiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The machine's facts: read once, then the background-refreshed copy (never waited on after start). */
  machineInfo(): Promise<MachineInfo> {
    return this.#machine.load();
  }

  async #status(signal: AbortSignal): Promise<NodeStatus> {
    const c = this.#o.config;
    const [machine, health] = await Promise.all([this.machineInfo(), this.#o.health(signal)]);
    return computeNodeStatus({
      machine,
      pressure: this.#o.pressure?.() ?? new Set(),
      health,
      internalIP: this.#o.internalIP,
      maxPods: c.maxPods,
      systemReserved: c.systemReserved,
      kubeReserved: c.kubeReserved,
      evictionHard: c.evictionHard,
      port: this.#o.nodeApiPort(),
      agentVersion: this.#o.agentVersion,
      images: nodeStatusImages(this.#o.images?.() ?? [], c.nodeStatusMaxImages),
      previous: this.#lastStatus,
      now: this.#o.clock.now(),
    });
  }

  #seePodCIDR(n: Node): void {
    if (n.spec?.podCIDR) this.#nodeHasPodCIDR = true;
    const cidr = n.spec?.podCIDR ?? this.#o.config.podCIDR;
    if (cidr && cidr !== this.#podCIDR) {
      this.#podCIDR = cidr;
      this.#o.onPodCIDR(cidr);
    }
  }

  /** Creates the Node, or adopts an existing one of the same name. */
  async register(signal: AbortSignal): Promise<Node> {
    const c = this.#o.config;
    const machine = await this.machineInfo();
    const status = await this.#status(signal);
    const labels = {
      'kubernetes.io/hostname': c.nodeName,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': machine.architecture,
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': machine.architecture,
      ...c.nodeLabels,
    };
    // spec.podCIDR is the IPAM controller's to set (NodeRestriction refuses it from a node, as a
    // CIDR a node picks could be another's): a configured --pod-cidr is only used locally, while
    // the Node has none (#seePodCIDR).
    // Where the server's local-path provisioner puts this node's PersistentVolumes (docs/workloads.md).
    const annotations = { [LOCAL_PATH_DIR_ANNOTATION]: join(c.rootDir, 'local-path') };
    const want: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: c.nodeName, labels, annotations }, spec: c.providerID ? { providerID: c.providerID } : {}, status };
    if (!c.registerNode) {
      // registerNode: false — someone else creates the Node; the agent only reports its status
      // (a NotFound here is retried by run()'s backoff until the Node appears).
      this.#node = await this.#o.api.get(NODES, c.nodeName, { signal });
    } else {
      try {
        this.#node = await this.#o.api.create(NODES, want, { signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
        this.#node = await this.#o.api.patch(NODES, c.nodeName, { metadata: { labels, annotations } }, { type: 'merge', signal });
      }
    }
    this.#node = await this.#o.api.patch(NODES, c.nodeName, statusPatch(status), { type: 'merge', subresource: 'status', signal });
    this.#lastStatus = status;
    this.#lastReportMs = this.#o.clock.now();
    this.#seePodCIDR(this.#node);
    this.#o.log.info({ node: c.nodeName }, 'Node registered');
    const node = this.#node;
    for (const w of [...this.#registeredWaiters]) w(node);
    this.#registeredWaiters.clear();
    return node;
  }

  /**
   * One status update. As kubelet does next to a Lease, an unchanged status (heartbeat times aside)
   * is only written again once `nodeStatusReportFrequency` has passed since the last write.
   */
  async update(signal: AbortSignal): Promise<void> {
    const status = await this.#status(signal);
    const now = this.#o.clock.now();
    const due = this.#pokedSinceReport || now - this.#lastReportMs >= this.#o.config.nodeStatusReportFrequencyMs;
    if (this.#lastStatus && !due && sameStatus(this.#lastStatus, status)) {
      // No write, so no Node read back: until the IPAM controller's spec.podCIDR has been seen, read
      // the Node for it (kubelet reads its Node from the lister at every status period), else a node
      // registered before its CIDR was assigned would wait NotReady for nodeStatusReportFrequency.
      if (!this.#nodeHasPodCIDR) this.#seePodCIDR(await this.#o.api.get(NODES, this.#o.config.nodeName, { signal }));
      return;
    }
    this.#lastReportMs = now;
    this.#pokedSinceReport = false;
    this.#node = await this.#o.api.patch(NODES, this.#o.config.nodeName, statusPatch(status), { type: 'merge', subresource: 'status', signal });
    const wasReady = this.#lastStatus?.conditions?.find((x) => x.type === 'Ready')?.status;
    const ready = status.conditions?.find((x) => x.type === 'Ready');
    if (wasReady !== ready?.status) this.#o.log.info({ ready: ready?.status, message: ready?.message }, 'Node readiness changed');
    this.#lastStatus = status;
    this.#seePodCIDR(this.#node);
  }

  /**
   * Registers with backoff, then updates status every `nodeStatusUpdateFrequency` (counted from the
   * end of the previous update) and on `poke()`, until `signal` aborts. Resolves when stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    const machine = this.#machine.start(signal);
    // A Node seen before registration ends is only read for its CIDR; the poke its callback makes
    // is kept for the first update.
    const watch = this.#o.watchNode?.((n) => this.#seePodCIDR(n));
    try {
      const backoff = new Backoff({ initialMs: 200, maxMs: 7000, clock: this.#o.clock });
      while (!signal.aborted && !this.#node) {
        try {
          await this.register(signal);
        } catch (err) {
          if (signal.aborted || isAbortError(err)) return;
          const wait = backoff.next();
          this.#o.log.warn({ err: describeError(err), retryInMs: wait }, 'Node registration failed');
          await this.#o.clock.sleep(wait, signal).catch(() => undefined); // rejects only when aborted; the loop checks the signal
        }
      }
      if (signal.aborted) return;
      const job = this.#o.clock.every(this.#o.config.nodeStatusUpdateFrequencyMs, (s) => this.update(s), {
        signal,
        onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Node status update failed'),
      });
      this.#job = job;
      if (this.#poked) job.trigger();
      await job.stopped;
    } finally {
      watch?.dispose();
      machine.dispose();
      await machine.stopped;
    }
  }
}

/**
 * The merge patch that makes the stored status `status`. A merge patch keeps a key it leaves out,
 * so an image list that became empty (left out of the status, as kubelet does) is removed with null.
 */
function statusPatch(status: NodeStatus): { status: Omit<NodeStatus, 'images'> & { images: NodeStatus['images'] | null } } {
  return { status: { ...status, images: status.images ?? null } };
}

/** Equal but for the conditions' heartbeat times (kubelet nodeStatusHasChanged). */
function sameStatus(a: NodeStatus, b: NodeStatus): boolean {
  const strip = (s: NodeStatus): string => JSON.stringify({ ...s, conditions: (s.conditions ?? []).map(({ lastHeartbeatTime: _hb, ...rest }) => rest) });
  return strip(a) === strip(b);
}
