/**
 * The `hollow` AgentHost: one per hollow node. The runtime is an in-process FakeCri, the pod
 * network is that runtime's address pool (given the node's pod CIDR by the agent, as the CNI
 * service would be), mounts are recorded nowhere (volume files are still written, into the
 * node's own root directory, but no tmpfs or bind mount is made), there is no logind lock, and
 * the host parts (node API, stats and eviction, log rotation) do not run.
 */
import type { Clock } from '@nodelet/base';
import type { ShutdownInhibitor } from '@nodelet/systemd';
import type { AgentHost, PodNetwork } from '../host.js';
import type { Mounter } from '../runtime/mount.js';
import { FakeCri, type HollowDelays } from './fake-cri.js';

/** Mounts that are not made: a hollow node's volumes are plain directories. */
export const hollowMounter: Mounter = {
  mountTmpfs: async () => undefined,
  bindMount: async () => undefined,
  unmount: async () => undefined,
  mountPointsUnder: async () => [],
  // "Already a tmpfs": the volume code then writes into the directory without mounting.
  isTmpfsMountPoint: async () => true,
};

/** No logind: a hollow node never sees a machine shutdown, so no lock is taken and no event comes. */
const noInhibitor: ShutdownInhibitor = {
  inhibitDelayMaxMs: async () => 0,
  raiseInhibitDelay: async () => undefined,
  // The lock and the watch hold nothing; `gone` and `ended` never settle, as logind's do not
  // while the machine keeps running.
  inhibit: async () => ({ release: async () => undefined, gone: new Promise<void>(() => undefined) }),
  watchShutdown: async () => ({ ended: new Promise<void>(() => undefined), close: () => undefined }),
};

export interface HollowHostOptions {
  delays?: Partial<HollowDelays>;
  clock?: Clock;
}

/** A host for one hollow node; `runtime` is its fake CRI (for tests and the hollow command's counters). */
export function hollowHost(o: HollowHostOptions = {}): AgentHost & { readonly runtime: FakeCri } {
  const runtime = new FakeCri({ delays: o.delays, clock: o.clock });
  const ipam = runtime.ipam;
  return {
    profile: 'hollow',
    runtime,
    connectRuntime: async () => ({ client: runtime, version: runtime.version() }),
    startPodNetwork: async (c): Promise<PodNetwork> => {
      if (c.podCIDR) ipam.setCidr(c.podCIDR);
      return { ready: () => !!ipam.cidr, setPodCIDR: (cidr) => ipam.setCidr(cidr), close: () => undefined };
    },
    mounter: hollowMounter,
    inhibitor: () => noInhibitor,
    hostParts: false,
  };
}
