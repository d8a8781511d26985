/**
 * Registers the Node and keeps its status current (kubelet kubelet_node_status.go):
 *
 *   register: create Node (labels, status) ── 409 → adopt it (labels merged), keep going
 *   every nodeStatusUpdateFrequency (and on `poke()`): compute status, merge-patch nodes/<n>/status
 *   every read of the Node: spec.podCIDR (or the configured one) → onPodCIDR (drives the CNI chain)
 */
import { waitWakeOrTimeout } from '../util/wait.js';
import { Backoff, Wakeup, delay, describeError, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import { join } from 'node:path';
import { LOCAL_PATH_DIR_ANNOTATION, NODES, type ApiClient, type Node, type NodeStatus } from '@nodelet/api';
import { computeNodeStatus, type RuntimeHealth } from './node-status.js';
import { readMachineUsage, type MachineInfo } from './machine-info.js';
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
}

export class NodeReporter {
  readonly #o: NodeReporterOptions;
  readonly #wake = new Wakeup();
  readonly #machine: MachineInfoCache;
  #node?: Node;
  #lastStatus?: NodeStatus;
  #podCIDR?: string;

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

  /** Ask for an immediate status update (runtime health changed). */
  poke(): void {
    this.#wake.notify();
  }

  /** The machine's facts: read once, then the background-refreshed copy (never waited on after start). */
  machineInfo(): Promise<MachineInfo> {
    return this.#machine.load();
  }

  async #status(signal: AbortSignal): Promise<NodeStatus> {
    const c = this.#o.config;
    const [machine, usage, health] = await Promise.all([this.machineInfo(), readMachineUsage(c.rootDir), this.#o.health(signal)]);
    return computeNodeStatus({
      machine,
      usage,
      health,
      internalIP: this.#o.internalIP,
      maxPods: c.maxPods,
      systemReserved: c.systemReserved,
      kubeReserved: c.kubeReserved,
      evictionHard: c.evictionHard,
      port: this.#o.nodeApiPort(),
      agentVersion: this.#o.agentVersion,
      previous: this.#lastStatus,
      now: this.#o.clock.now(),
    });
  }

  #seePodCIDR(n: Node): void {
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
    const want: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: c.nodeName, labels, annotations }, spec: {}, status };
    try {
      this.#node = await this.#o.api.create(NODES, want, { signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
      this.#node = await this.#o.api.patch(NODES, c.nodeName, { metadata: { labels, annotations } }, { type: 'merge', signal });
    }
    this.#node = await this.#o.api.patch(NODES, c.nodeName, { status }, { type: 'merge', subresource: 'status', signal });
    this.#lastStatus = status;
    this.#seePodCIDR(this.#node);
    this.#o.log.info({ node: c.nodeName }, 'Node registered');
    return this.#node;
  }

  /** One status update. */
  async update(signal: AbortSignal): Promise<void> {
    const status = await this.#status(signal);
    this.#node = await this.#o.api.patch(NODES, this.#o.config.nodeName, { status }, { type: 'merge', subresource: 'status', signal });
    const wasReady = this.#lastStatus?.conditions?.find((x) => x.type === 'Ready')?.status;
    const ready = status.conditions?.find((x) => x.type === 'Ready');
    if (wasReady !== ready?.status) this.#o.log.info({ ready: ready?.status, message: ready?.message }, 'Node readiness changed');
    this.#lastStatus = status;
    this.#seePodCIDR(this.#node);
  }

  /** Registers with backoff, then updates status until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.#machine.start(signal);
    const backoff = new Backoff({ initialMs: 200, maxMs: 7000, clock: this.#o.clock });
    while (!signal.aborted && !this.#node) {
      try {
        await this.register(signal);
      } catch (err) {
        if (signal.aborted || isAbortError(err)) return;
        const wait = backoff.next();
        this.#o.log.warn({ err: describeError(err), retryInMs: wait }, 'Node registration failed');
        await delay(wait, signal).catch(() => undefined);
      }
    }
    while (!signal.aborted) {
      try {
        await waitWakeOrTimeout(this.#wake, this.#o.config.nodeStatusUpdateFrequencyMs, this.#o.clock, signal);
      } catch {
        return;
      }
      try {
        await this.update(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#o.log.warn({ err: describeError(err) }, 'Node status update failed');
      }
    }
  }
}
