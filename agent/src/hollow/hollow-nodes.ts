/**
 * N hollow nodes in one process (docs/hollow-nodes.md): each is a full Agent with its own node
 * credential, its own API client, its own root directory and the `hollow` host (fake CRI, fake pod
 * network, no host parts). They share the event loop and nothing else.
 *
 *   start():  admin client → per node (a few at a time): credential (CSR) → Agent.start
 *   close():  every agent closed (loops stop, leases stop being renewed), then the API clients.
 *             Nodes stay registered; their pods' containers vanish with the process. Idempotent.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError, Semaphore, type Logger } from '@nodelet/base';
import { ApiClient, type ResolvedKubeconfig } from '@nodelet/api/agent';
import { Agent } from '../agent.js';
import { resolveConfig, type KubeletConfigurationFile } from '../config/config.js';
import type { FakeCri, HollowDelays } from './fake-cri.js';
import { hollowHost } from './hollow-host.js';
import { issueNodeCredential } from './node-identity.js';
import { CountingApiClient, WatchStats } from './watch-stats.js';

/** The label every hollow node carries, so benches and tests can tell them apart. */
export const HOLLOW_NODE_LABEL = 'nodelet.io/hollow';

export interface HollowNodesOptions {
  /** The admin kubeconfig (resolved): used to issue the node credentials, never by the agents. */
  admin: ResolvedKubeconfig;
  nodes: number;
  /** Node names are `<prefix><index>`, index from 0 (default `hollow-`). */
  namePrefix?: string;
  /** maxPods of each node (default 110). */
  podsPerNode?: number;
  /** Each node's root directory is `<rootDir>/<node name>` (volume files of its pods). */
  rootDir: string;
  log: Logger;
  delays?: Partial<HollowDelays>;
  /** Agents started at once (default 10): CSRs and registrations come in waves, not all together. */
  startConcurrency?: number;
  /** Extra KubeletConfiguration fields for every node (tests shorten periods). */
  config?: KubeletConfigurationFile;
  signal?: AbortSignal;
}

interface Member {
  name: string;
  agent: Agent;
  api: ApiClient;
  runtime: FakeCri;
}

export class HollowNodes {
  readonly #members: Member[] = [];
  /** The watches every node's client holds and the events they delivered. */
  readonly watches = new WatchStats();
  readonly #log: Logger;
  #closed?: Promise<void>;

  private constructor(log: Logger) {
    this.#log = log;
  }

  /** Starts every node; on a failure closes the ones started and rejects. */
  static async start(o: HollowNodesOptions): Promise<HollowNodes> {
    const h = new HollowNodes(o.log);
    const admin = new ApiClient(o.admin);
    try {
      const limit = new Semaphore(o.startConcurrency ?? 10);
      const prefix = o.namePrefix ?? 'hollow-';
      await Promise.all(Array.from({ length: o.nodes }, (_v, i) => limit.use(() => h.#startOne(o, admin, `${prefix}${i}`), o.signal)));
      return h;
    } catch (err) {
      await h.close();
      throw err;
    } finally {
      admin.close();
    }
  }

  /** The running agents, in start order. */
  get agents(): Agent[] {
    return this.#members.map((m) => m.agent);
  }

  get names(): string[] {
    return this.#members.map((m) => m.name);
  }

  /** Every node's fake runtime (what it runs now), in start order. */
  get runtimes(): FakeCri[] {
    return this.#members.map((m) => m.runtime);
  }

  /** The API client node `name` runs with (its own system:node credential), for tests. */
  client(name: string): ApiClient | undefined {
    return this.#members.find((m) => m.name === name)?.api;
  }

  async #startOne(o: HollowNodesOptions, admin: ApiClient, name: string): Promise<void> {
    o.signal?.throwIfAborted();
    const cred = await issueNodeCredential(admin, o.admin, name, o.signal);
    const rootDir = join(o.rootDir, name);
    await mkdir(rootDir, { recursive: true });
    const config = resolveConfig(
      {
        maxPods: o.podsPerNode ?? 110,
        rootDir,
        podLogsDir: join(rootDir, 'logs'),
        // No node API to serve, no credential file to renew, no logind, no resolver, no proxy.
        serverTLSBootstrap: false,
        rotateCertificates: false,
        shutdownGracePeriod: '0s',
        clusterDNSResolver: false,
        proxy: { mode: 'none' },
        // The hollow runtime starts no processes, so there is nothing to put in pod cgroups.
        cgroupsPerQOS: false,
        ...o.config,
        nodeLabels: { [HOLLOW_NODE_LABEL]: 'true', ...o.config?.nodeLabels },
      },
      { nodeName: name },
      name,
    );
    const api = new CountingApiClient({ server: cred.server, ca: cred.ca, cert: cred.cert, key: cred.key, insecureSkipTlsVerify: cred.insecureSkipTlsVerify, userAgent: `nodelet-hollow/${name}` }, this.watches);
    try {
      const host = hollowHost({ delays: o.delays });
      const agent = await Agent.start({ config, api, log: o.log.child({ node: name }), host });
      this.#members.push({ name, agent, api, runtime: host.runtime });
      // Closed while this one started: close() has already taken the others.
      if (this.#closed) await this.#closeMembers();
    } catch (err) {
      api.close();
      throw err;
    }
  }

  /** Stops every agent (leases stop) and closes their clients. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#closeMembers();
    return this.#closed;
  }

  async #closeMembers(): Promise<void> {
    const members = this.#members.splice(0);
    await Promise.all(
      members.map(async (m) => {
        await m.agent.close().catch((err: unknown) => this.#log.warn({ node: m.name, err: describeError(err) }, 'Hollow node failed to close'));
        m.api.close();
      }),
    );
  }
}
