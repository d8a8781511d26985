/** One plugin object of a network configuration list (unknown keys pass through unchanged). */
export interface PluginConf {
  type: string;
  capabilities?: Record<string, boolean>;
  ipam?: { type: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** A validated network configuration list (a `.conflist`, or a `.conf` up-converted to a list). */
export interface NetworkConfigList {
  name: string;
  cniVersion: string;
  cniVersions?: string[];
  disableCheck: boolean;
  disableGC: boolean;
  plugins: PluginConf[];
  /** The bytes it was parsed from (cached with each attachment, as libcni does). */
  bytes: Buffer;
  /** File it was loaded from, for messages. */
  source?: string;
}

/** The per-attachment parameters of an operation (libcni's RuntimeConf). */
export interface RuntimeConf {
  containerID: string;
  /** Netns path; optional for DEL (containerd's second DEL has none). */
  netns?: string;
  ifName: string;
  /** CNI_ARGS pairs, e.g. [['K8S_POD_NAME', 'web-0']]. */
  args?: Array<[string, string]>;
  /** Capability values, injected as runtimeConfig only into plugins that declare them. */
  capabilityArgs?: Record<string, unknown>;
}

/** Kubernetes CNI_ARGS keys (what containerd sends), plus IgnoreUnknown=1. */
export interface PodCniArgs {
  namespace: string;
  name: string;
  uid?: string;
  infraContainerID?: string;
}

export function podCniArgs(pod: PodCniArgs): Array<[string, string]> {
  const out: Array<[string, string]> = [
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', pod.namespace],
    ['K8S_POD_NAME', pod.name],
  ];
  if (pod.infraContainerID) out.push(['K8S_POD_INFRA_CONTAINER_ID', pod.infraContainerID]);
  if (pod.uid) out.push(['K8S_POD_UID', pod.uid]);
  return out;
}

export interface CniInterface {
  name: string;
  mac?: string;
  mtu?: number;
  sandbox?: string;
  socketPath?: string;
  pciID?: string;
}

export interface CniIPConfig {
  address: string;
  gateway?: string;
  interface?: number;
}

export interface CniRoute {
  dst: string;
  gw?: string;
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}

export interface CniDNS {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

/** A result in the 1.x shape, the engine's canonical form (see version.ts for conversions). */
export interface CniResult {
  cniVersion: string;
  interfaces?: CniInterface[];
  ips?: CniIPConfig[];
  routes?: CniRoute[];
  dns?: CniDNS;
}

/** A plugin's answer to VERSION. */
export interface VersionInfo {
  cniVersion: string;
  supportedVersions: string[];
}

/** An attachment the runtime still considers valid (GC keeps these). */
export interface AttachmentKey {
  containerID: string;
  ifName: string;
}
