/**
 * What the agent takes from the machine it runs on, as one seam: the container runtime, the pod
 * network, mounts, the logind shutdown lock, and whether the parts that serve or measure the
 * machine itself run. `nodeHost` is a real node; `hollowHost` (hollow/hollow-host.ts) is a
 * simulated one that many agents share in one process (docs/hollow-nodes.md). Everything above
 * this seam — pod configuration, admission, pod workers, PLEG, status, lease, node status,
 * events, housekeeping — is the same code for both.
 */
import type { Logger } from '@nodelet/base';
import { installNodeletCni, startCniService, type CniService, type CniServiceOptions } from '@nodelet/cni';
import { connectCriClient, type CriClient } from '@nodelet/cri-client';
import { logindInhibitor, type ShutdownInhibitor } from '@nodelet/systemd';
import type { AgentConfig } from './config/config.js';
import { hostMounter, type Mounter } from './runtime/mount.js';
import type { CriVersion } from './kubecontainer/cri.js';

/** How pods get their addresses. */
export interface PodNetwork {
  /** Whether pods can be given addresses now (the runtime's NetworkReady as the node reports it). */
  ready(): boolean;
  /** The node's pod CIDR as the server's IPAM assigned it. Throws ERR_INVALID_ARGUMENT for a malformed one. */
  setPodCIDR(cidr: string): void;
  /** The CNI service when pods are attached through CNI (its cache is garbage-collected). */
  readonly cni?: CniService;
  close(): unknown;
}

export interface AgentHost {
  /** `node`: a real machine; `hollow`: a simulated node (docs/hollow-nodes.md). Logged at start. */
  readonly profile: 'node' | 'hollow';
  /** The runtime after its Version handshake, waiting up to `waitMs` for it to come up. */
  connectRuntime(c: AgentConfig, waitMs: number): Promise<{ client: CriClient; version: CriVersion }>;
  /**
   * Starts the pod network before any pod runs; closed by the agent. `onAdd` hears each CNI ADD
   * with its timing (the pod journey's network span, docs/tracing.md) where pods are attached by CNI;
   * `mtu` is the pods' (the pod bridge's) when the pod network's encapsulation needs a smaller one.
   */
  startPodNetwork(c: AgentConfig, log: Logger, hooks?: { onAdd?: CniServiceOptions['onAdd']; mtu?: number }): Promise<PodNetwork>;
  readonly mounter: Mounter;
  /** The graceful-shutdown lock (systemd-logind on a real node). */
  inhibitor(log: Logger): ShutdownInhibitor;
  /**
   * Whether the parts that serve or measure the machine itself run: the node API (:10250 and
   * healthz), resource stats and node-pressure eviction, container log rotation. A hollow node
   * has no machine of its own to serve, measure or rotate logs on.
   */
  readonly hostParts: boolean;
}

/** A real node: the configured CRI socket, the CNI service, mount(8), systemd-logind. */
export const nodeHost: AgentHost = {
  profile: 'node',
  connectRuntime: (c, waitMs) => connectCriClient({ endpoint: c.containerRuntimeEndpoint, waitMs }),
  async startPodNetwork(c, log, hooks) {
    await installNodeletCni(c.cniBinDir, { pluginDirs: c.cniPluginDirs });
    const cni = await startCniService({
      socketPath: c.cniSocketPath,
      binDirs: c.cniPluginDirs,
      cacheDir: c.cniCacheDir,
      chain: { podCIDR: c.podCIDR, bridgeName: c.cniBridgeName, ipamDataDir: c.cniIpamDataDir, hairpin: true, ...(hooks?.mtu ? { mtu: hooks.mtu } : {}) },
      runtimeConfDir: c.cniConfDir,
      logger: log,
      ...(hooks?.onAdd ? { onAdd: hooks.onAdd } : {}),
    });
    return { cni, ready: () => !!cni.network(), setPodCIDR: (cidr) => cni.setPodCIDR(cidr), close: () => cni.close() };
  },
  mounter: hostMounter,
  inhibitor: (log) => logindInhibitor({ log }),
  hostParts: true,
};
