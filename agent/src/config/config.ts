/**
 * The agent's configuration: a KubeletConfiguration-shaped YAML file (`--config`) overlaid by flags.
 *
 * Field names are the kubelet's (kubelet.config.k8s.io/v1beta1) where one exists; nodelet-only fields
 * (CNI service socket, real plugin dir) are named in the same style. Defaults are the kubelet's
 * (docs/reference/kubelet-behaviour.md §2). `resolveConfig` validates everything once, at start, and throws
 * an AgentError(ERR_INVALID_ARGUMENT) naming the offending field, so a bad file never half-starts an agent.
 */
import { AgentError, parseDuration } from '@nodelet/base';
import { cronProblem } from '@nodelet/base/cron';
import { parse as parseYaml } from 'yaml';
import { otlpTracesUrl, refuseUnreadOtelVariables } from '@nodelet/api/tracing';
import { parseQuantity } from '../util/quantity.js';
import { VXLAN_DEFAULTS, vxlanDeviceName, type PodNetworkBackend } from '../network/route-plan.js';
import { resolveProxyConfig, type ProxyConfig, type ProxyConfigFile, type ProxyFlags } from '../proxy/config.js';
import { resolveDnsConfig, type ClusterDnsConfig, type ClusterDnsConfigFile, type ClusterDnsFlags } from '../dns/config.js';
import { validateUnsafeSysctls } from '../admission/security.js';
import { resolveEvictionConfig, type EvictionConfig, type EvictionConfigFile } from '../eviction/thresholds.js';

/** What the file may contain (all optional; durations as Go strings). */
export interface KubeletConfigurationFile extends ClusterDnsConfigFile, EvictionConfigFile {
  apiVersion?: string;
  kind?: string;
  address?: string;
  port?: number;
  healthzBindAddress?: string;
  healthzPort?: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Request the serving certificate from the cluster (kubernetes.io/kubelet-serving CSR) instead of self-signing. */
  serverTLSBootstrap?: boolean;
  /** Renew the node's API credential before it expires. */
  rotateCertificates?: boolean;
  /** kubelet's TracingConfiguration: OTLP/HTTP collector of the pod journey spans (docs/tracing.md). */
  tracing?: { endpoint?: string };
  authentication?: { anonymous?: { enabled?: boolean }; webhook?: { enabled?: boolean; cacheTTL?: string }; x509?: { clientCAFile?: string } };
  authorization?: { mode?: string; webhook?: { cacheAuthorizedTTL?: string; cacheUnauthorizedTTL?: string } };
  containerRuntimeEndpoint?: string;
  imageServiceEndpoint?: string;
  runtimeRequestTimeout?: string;
  nodeStatusUpdateFrequency?: string;
  nodeStatusReportFrequency?: string;
  /** Images reported in the Node's status.images, largest first (default 50; -1: all). */
  nodeStatusMaxImages?: number;
  nodeLeaseDurationSeconds?: number;
  syncFrequency?: string;
  fileCheckFrequency?: string;
  staticPodPath?: string;
  podCIDR?: string;
  maxPods?: number;
  podPidsLimit?: number;
  /** Pod and QoS-class cgroups under `kubepods` (docs/agent.md, cgroup layout); default true. */
  cgroupsPerQOS?: boolean;
  /** The cgroup `kubepods` is made in (default "/"). */
  cgroupRoot?: string;
  /** Only `cgroupfs` (the default); `systemd` is refused at start. */
  cgroupDriver?: string;
  /** Sysctl names or `prefix*` patterns pods may set beyond the safe set (namespaced ones only). */
  allowedUnsafeSysctls?: string[];
  /** RuntimeDefault instead of Unconfined for containers whose pod names no seccomp profile. */
  seccompDefault?: boolean;
  /** How pods' ConfigMaps and Secrets are read: `Watch` (default; one watch per object) or `Get` (a GET per read). */
  configMapAndSecretChangeDetectionStrategy?: string;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  imageGCHighThresholdPercent?: number;
  imageGCLowThresholdPercent?: number;
  imageMinimumGCAge?: string;
  /**
   * nodelet: also remove every unused image (first seen at least imageMinimumGCAge ago) on this
   * 5-field cron schedule, e.g. nightly, whatever the disk thresholds say (default: thresholds only).
   */
  imageGCScheduleCron?: string;
  serializeImagePulls?: boolean;
  maxParallelImagePulls?: number;
  registerNode?: boolean;
  podLogsDir?: string;
  /** Rotate a container's log at this size (quantity, default 10Mi). */
  containerLogMaxSize?: string;
  /** Log files kept per container, the current one included (default 5, at least 2). */
  containerLogMaxFiles?: number;
  /** How often log sizes are checked (default 10s). */
  containerLogMonitorInterval?: string;
  /** kubelet 1.32 (KubeletCrashLoopBackOffMax); `initialContainerRestartPeriod` is nodelet-only (tests). */
  crashLoopBackOff?: { maxContainerRestartPeriod?: string; initialContainerRestartPeriod?: string };
  providerID?: string;
  nodeLabels?: Record<string, string>;
  /** Graceful node shutdown (docs/agent.md): how long a shutdown is delayed for pods; 0 = off. */
  shutdownGracePeriod?: string;
  /** The part of shutdownGracePeriod kept for critical pods, which stop after the others. */
  shutdownGracePeriodCriticalPods?: string;
  // nodelet-only
  /** Every API server of an HA control plane (the kubeconfig's `server` is tried first); docs/ha.md. */
  apiServers?: string[];
  cniBinDir?: string;
  cniConfDir?: string;
  cniPluginDirs?: string[];
  cniSocketPath?: string;
  cniBridgeName?: string;
  cniCacheDir?: string;
  cniIpamDataDir?: string;
  nodeIP?: string;
  rootDir?: string;
  /** The service proxy (docs/services.md). */
  proxy?: ProxyConfigFile;
  /** Inter-node pod routing (docs/network.md). */
  podNetwork?: { backend?: string; vxlanVNI?: number; vxlanPort?: number };
}

/** Flags of `nodelet agent` (they win over the file). */
export interface AgentFlags extends ProxyFlags, ClusterDnsFlags {
  config?: string;
  kubeconfig?: string;
  /** Comma-separated API server URLs (`--api-servers`); wins over `apiServers` in the file. */
  apiServers?: string;
  nodeName?: string;
  containerRuntimeEndpoint?: string;
  cniBinDir?: string;
  cniConfDir?: string;
  rootDir?: string;
  podManifestPath?: string;
  podCidr?: string;
  port?: number;
  healthzPort?: number;
  nodeIp?: string;
  containerLogMaxSize?: string;
  containerLogMaxFiles?: number;
  tracingEndpoint?: string;
  /** `--pod-network host-gw|vxlan|none`; wins over `podNetwork.backend`. */
  podNetwork?: string;
}

/** The validated, fully defaulted configuration every component reads. Times in ms. */
export interface AgentConfig extends ClusterDnsConfig, EvictionConfig {
  kubeconfig?: string;
  /** API servers to fail over between, besides the kubeconfig's (undefined: the kubeconfig decides). */
  apiServers?: string[];
  nodeName: string;
  address: string;
  port: number;
  healthzBindAddress: string;
  healthzPort: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Serving certificate through the CSR flow when no tlsCertFile is given (nodelet default: true). */
  serverTLSBootstrap: boolean;
  /** Node credential renewal (nodelet default: true). */
  rotateCertificates: boolean;
  /** Where pod journey spans are exported over OTLP/HTTP; unset: only kept for the node API's /debug/nodelet/traces/. */
  tracingEndpoint?: string;
  anonymousAuth: boolean;
  webhookAuth: boolean;
  webhookCacheTTLMs: number;
  clientCAFile?: string;
  /** Node API authorization: `Webhook` (SubjectAccessReview, the default) or `AlwaysAllow`. */
  authorizationMode: 'Webhook' | 'AlwaysAllow';
  authorizationCacheAuthorizedTTLMs: number;
  authorizationCacheUnauthorizedTTLMs: number;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  runtimeRequestTimeoutMs: number;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  /** -1: every image. */
  nodeStatusMaxImages: number;
  nodeLeaseDurationSeconds: number;
  syncFrequencyMs: number;
  fileCheckFrequencyMs: number;
  staticPodPath?: string;
  podCIDR?: string;
  maxPods: number;
  podPidsLimit: number;
  cgroupsPerQOS: boolean;
  cgroupRoot: string;
  allowedUnsafeSysctls: string[];
  seccompDefault: boolean;
  configMapAndSecretChangeDetectionStrategy: 'Watch' | 'Get';
  systemReserved: Record<string, number>;
  kubeReserved: Record<string, number>;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;
  /** Unset: image GC at the disk thresholds only. */
  imageGCScheduleCron?: string;
  serializeImagePulls: boolean;
  maxParallelImagePulls: number;
  registerNode: boolean;
  /** Set as the Node's spec.providerID when the agent creates it. */
  providerID?: string;
  podLogsDir: string;
  containerLogMaxSizeBytes: number;
  containerLogMaxFiles: number;
  containerLogMonitorIntervalMs: number;
  crashLoopInitialMs: number;
  crashLoopMaxMs: number;
  /** Graceful node shutdown; 0 = disabled (kubelet's default). */
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  nodeLabels: Record<string, string>;
  cniBinDir: string;
  cniConfDir: string;
  cniPluginDirs: string[];
  cniSocketPath: string;
  cniBridgeName: string;
  cniCacheDir: string;
  cniIpamDataDir?: string;
  nodeIP?: string;
  rootDir: string;
  proxy: ProxyConfig;
  /** Inter-node pod routing (docs/network.md): backend host-gw (default, VXLAN per unreachable peer), vxlan or none. */
  podNetwork: { backend: PodNetworkBackend; vxlan: { vni: number; port: number; device: string } };
}

/** An OTLP/HTTP endpoint, checked now so a typo stops the agent at start, not at the first export. */
function tracingEndpoint(field: string, v: string | undefined): string | undefined {
  if (!v) return undefined;
  try {
    otlpTracesUrl(v);
    refuseUnreadOtelVariables();
  } catch (err) {
    throw invalid(field, (err as Error).message);
  }
  return v;
}

function invalid(field: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: ${field}: ${why}`);
}

function duration(field: string, v: unknown, dflt: string, allowZero = false): number {
  const raw = v ?? dflt;
  if (typeof raw !== 'string' && typeof raw !== 'number') throw invalid(field, `must be a duration like "10s", got ${JSON.stringify(raw)}`);
  let ms: number;
  try {
    // A JSON number is milliseconds; a string is a Go duration, which needs a unit ("10s").
    ms = typeof raw === 'number' ? raw : parseDuration(raw, { bare: 'reject' });
  } catch {
    throw invalid(field, `must be a duration like "10s", got ${JSON.stringify(raw)}`);
  }
  if (allowZero ? !(ms >= 0) : !(ms > 0)) throw invalid(field, `must be ${allowZero ? 'zero or positive' : 'positive'}, got ${JSON.stringify(raw)}`);
  return ms;
}

/** kubelet's graceful node shutdown pair: 0 disables it; the critical pods' share cannot exceed the whole. */
function shutdownGrace(file: KubeletConfigurationFile): { shutdownGracePeriodMs: number; shutdownGracePeriodCriticalPodsMs: number } {
  const total = duration('shutdownGracePeriod', file.shutdownGracePeriod, '0s', true);
  const critical = duration('shutdownGracePeriodCriticalPods', file.shutdownGracePeriodCriticalPods, '0s', true);
  if (critical > total) throw invalid('shutdownGracePeriodCriticalPods', `must be <= shutdownGracePeriod (${file.shutdownGracePeriod ?? '0s'}), got ${JSON.stringify(file.shutdownGracePeriodCriticalPods)}`);
  return { shutdownGracePeriodMs: total, shutdownGracePeriodCriticalPodsMs: critical };
}

/** A log size quantity (`10Mi`, `100Ki`, bytes); kubelet refuses anything under 1 byte. */
function logSize(field: string, v: unknown): number {
  const raw = v ?? '10Mi';
  let n = NaN;
  if (typeof raw === 'string' || typeof raw === 'number') {
    try {
      n = parseQuantity(raw);
    } catch {
      n = NaN;
    }
  }
  if (!Number.isFinite(n) || n < 1) throw invalid(field, `must be a positive quantity like "10Mi", got ${JSON.stringify(raw)}`);
  return Math.floor(n);
}

function int(field: string, v: unknown, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = v ?? dflt;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw invalid(field, `must be an integer in [${min}, ${max === Number.MAX_SAFE_INTEGER ? '\u221e' : max}], got ${JSON.stringify(n)}`);
  }
  return n;
}

function bool(field: string, v: unknown, dflt: boolean): boolean {
  const b = v ?? dflt;
  if (typeof b !== 'boolean') throw invalid(field, `must be true or false, got ${JSON.stringify(b)}`);
  return b;
}

function oneOf<T extends string>(field: string, v: unknown, allowed: readonly T[], dflt: T): T {
  const x = v ?? dflt;
  if (typeof x !== 'string' || !(allowed as readonly string[]).includes(x)) throw invalid(field, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(x)}`);
  return x as T;
}

function str(field: string, v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw invalid(field, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function reserved(field: string, v: unknown): Record<string, number> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(field, 'must be a map like {cpu: "100m", memory: "256Mi"}');
  const out: Record<string, number> = {};
  for (const [k, q] of Object.entries(v as Record<string, unknown>)) {
    if (!['cpu', 'memory', 'ephemeral-storage', 'pid'].includes(k)) throw invalid(`${field}.${k}`, 'unknown resource (use cpu, memory, ephemeral-storage, pid)');
    try {
      out[k] = parseQuantity(String(q));
    } catch {
      throw invalid(`${field}.${k}`, `invalid quantity ${JSON.stringify(q)}`);
    }
  }
  return out;
}

function cidr(field: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(v);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32) throw invalid(field, `must be an IPv4 CIDR like "10.244.1.0/24", got ${JSON.stringify(v)}`);
  return v;
}

/** `apiServers`: http(s) URLs without duplicates; empty entries (a trailing comma) are dropped. */
function serverList(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw invalid('apiServers', 'must be a list of URLs');
  const urls = v.map((u) => (typeof u === 'string' ? u.trim() : u)).filter((u) => u !== '');
  for (const u of urls) {
    if (typeof u !== 'string' || !/^https?:\/\/[^/]/.test(u)) throw invalid('apiServers', `${JSON.stringify(u)} is not an http(s):// URL`);
  }
  return urls.length > 0 ? [...new Set(urls as string[])] : undefined;
}

function endpoint(field: string, v: string): string {
  if (v.startsWith('unix://')) return v;
  if (v.startsWith('/')) return `unix://${v}`;
  throw invalid(field, `must be a unix socket like "unix:///run/containerd/containerd.sock", got ${JSON.stringify(v)}`);
}

/**
 * Every top-level key the file may hold; the type makes the compiler keep it in step with
 * KubeletConfigurationFile (a key added there and not here, or the reverse, fails the build).
 */
const KNOWN_KEYS: Record<keyof KubeletConfigurationFile, true> = {
  apiVersion: true, kind: true, address: true, port: true, healthzBindAddress: true, healthzPort: true, tlsCertFile: true,
  tlsPrivateKeyFile: true, serverTLSBootstrap: true, rotateCertificates: true, tracing: true, authentication: true,
  authorization: true, containerRuntimeEndpoint: true, imageServiceEndpoint: true, runtimeRequestTimeout: true,
  nodeStatusUpdateFrequency: true, nodeStatusReportFrequency: true, nodeStatusMaxImages: true, nodeLeaseDurationSeconds: true, syncFrequency: true,
  fileCheckFrequency: true, staticPodPath: true, podCIDR: true, maxPods: true, podPidsLimit: true, cgroupsPerQOS: true,
  cgroupRoot: true, cgroupDriver: true, allowedUnsafeSysctls: true, seccompDefault: true, configMapAndSecretChangeDetectionStrategy: true, systemReserved: true,
  kubeReserved: true, imageGCHighThresholdPercent: true, imageGCLowThresholdPercent: true, imageMinimumGCAge: true, imageGCScheduleCron: true,
  serializeImagePulls: true, maxParallelImagePulls: true, registerNode: true, podLogsDir: true, containerLogMaxSize: true,
  containerLogMaxFiles: true, containerLogMonitorInterval: true, crashLoopBackOff: true, providerID: true, nodeLabels: true,
  shutdownGracePeriod: true, shutdownGracePeriodCriticalPods: true, apiServers: true, cniBinDir: true, cniConfDir: true,
  cniPluginDirs: true, cniSocketPath: true, cniBridgeName: true, cniCacheDir: true, cniIpamDataDir: true, nodeIP: true,
  rootDir: true, proxy: true, clusterDNS: true, clusterDomain: true, resolvConf: true, clusterDNSResolver: true,
  clusterDNSBindAddress: true, clusterDNSPodRecords: true, evictionHard: true, evictionSoft: true,
  evictionSoftGracePeriod: true, evictionPressureTransitionPeriod: true, evictionMinimumReclaim: true,
  evictionMaxPodGracePeriod: true,
  podNetwork: true,
};

/**
 * The file's top-level keys this agent does not know. kubelet's strict decoding reports such a key
 * and goes on with lenient decoding, so the caller warns rather than refusing (a typo stays visible).
 */
export function unknownConfigKeys(file: KubeletConfigurationFile): string[] {
  return Object.keys(file).filter((k) => !Object.hasOwn(KNOWN_KEYS, k));
}

/** Parses the YAML text of a config file. Throws ERR_INVALID_ARGUMENT with the YAML error. */
export function parseConfigFile(text: string, source = 'config'): KubeletConfigurationFile {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config ${source}: not valid YAML`, { cause: err });
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config ${source}: must be a YAML map`);
  const kind = (doc as { kind?: unknown }).kind;
  if (kind !== undefined && kind !== 'KubeletConfiguration' && kind !== 'AgentConfiguration') {
    throw invalid('kind', `must be KubeletConfiguration, got ${JSON.stringify(kind)}`);
  }
  return doc as KubeletConfigurationFile;
}

/** `allowedUnsafeSysctls`: a list of namespaced sysctl names or prefixes (admission/security.ts). */
function unsafeSysctls(v: unknown): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw invalid('allowedUnsafeSysctls', `must be a list of sysctl names, got ${JSON.stringify(v)}`);
  validateUnsafeSysctls(v as string[]);
  return [...(v as string[])];
}

/** The image service is the runtime's own: one CRI client serves both, so another endpoint is refused. */
function imageEndpoint(file: KubeletConfigurationFile, runtimeEp: string): string {
  const ep = str('imageServiceEndpoint', file.imageServiceEndpoint);
  if (ep === undefined || ep === '') return runtimeEp;
  const parsed = endpoint('imageServiceEndpoint', ep);
  if (parsed !== runtimeEp) throw invalid('imageServiceEndpoint', `a separate image service is not supported: leave it unset or equal to containerRuntimeEndpoint (${runtimeEp})`);
  return parsed;
}

/**
 * Merges file and flags, applies defaults, validates. `hostname` is the default node name.
 * Pure: no I/O, so every rule is unit-tested.
 */
export function resolveConfig(file: KubeletConfigurationFile, flags: AgentFlags, hostname: string): AgentConfig {
  const rootDir = flags.rootDir ?? str('rootDir', file.rootDir) ?? '/var/lib/nodelet';
  const high = int('imageGCHighThresholdPercent', file.imageGCHighThresholdPercent, 85, 0, 100);
  const low = int('imageGCLowThresholdPercent', file.imageGCLowThresholdPercent, 80, 0, 100);
  if (low > high) throw invalid('imageGCLowThresholdPercent', `must not exceed imageGCHighThresholdPercent (${low} > ${high})`);
  const nodeName = (flags.nodeName ?? hostname).toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(nodeName)) throw invalid('nodeName', `must be a DNS subdomain, got ${JSON.stringify(nodeName)}`);
  const serialize = bool('serializeImagePulls', file.serializeImagePulls, true);
  const runtimeEp = endpoint('containerRuntimeEndpoint', flags.containerRuntimeEndpoint ?? str('containerRuntimeEndpoint', file.containerRuntimeEndpoint) ?? 'unix:///run/containerd/containerd.sock');
  const leaseS = int('nodeLeaseDurationSeconds', file.nodeLeaseDurationSeconds, 40, 1);
  const pidsLimit = int('podPidsLimit', file.podPidsLimit, -1, -1);
  const tlsCertFile = str('tlsCertFile', file.tlsCertFile);
  const tlsPrivateKeyFile = str('tlsPrivateKeyFile', file.tlsPrivateKeyFile);
  if (!tlsCertFile !== !tlsPrivateKeyFile) throw invalid(tlsCertFile ? 'tlsPrivateKeyFile' : 'tlsCertFile', 'tlsCertFile and tlsPrivateKeyFile must be given together');
  if (pidsLimit === 0) throw invalid('podPidsLimit', 'must be -1 (unlimited) or positive, got 0');
  const cgroupDriver = str('cgroupDriver', file.cgroupDriver) ?? 'cgroupfs';
  if (cgroupDriver === 'systemd') throw invalid('cgroupDriver', 'the systemd cgroup driver is not supported: use cgroupfs (and SystemdCgroup = false in containerd\'s runc options)');
  if (cgroupDriver !== 'cgroupfs') throw invalid('cgroupDriver', `must be cgroupfs, got ${JSON.stringify(cgroupDriver)}`);
  const cgroupRoot = str('cgroupRoot', file.cgroupRoot) ?? '/';
  if (!cgroupRoot.startsWith('/') || cgroupRoot.split('/').includes('..')) throw invalid('cgroupRoot', `must be an absolute cgroup path, got ${JSON.stringify(cgroupRoot)}`);
  const cgroupsPerQOS = bool('cgroupsPerQOS', file.cgroupsPerQOS, true);
  // The pids limit lives on the pod cgroup: without one it would be accepted and ignored.
  if (pidsLimit > 0 && !cgroupsPerQOS) throw invalid('podPidsLimit', 'needs cgroupsPerQOS: true (it is set on the pod cgroup)');
  const apiServers = serverList(flags.apiServers !== undefined ? flags.apiServers.split(',') : file.apiServers);
  return {
    kubeconfig: flags.kubeconfig,
    ...(apiServers ? { apiServers } : {}),
    nodeName,
    address: str('address', file.address) ?? '0.0.0.0',
    port: int('port', flags.port ?? file.port, 10250, 0, 65535),
    healthzBindAddress: str('healthzBindAddress', file.healthzBindAddress) ?? '127.0.0.1',
    healthzPort: int('healthzPort', flags.healthzPort ?? file.healthzPort, 10248, 0, 65535),
    tlsCertFile,
    tlsPrivateKeyFile,
    // kubelet defaults both to false; nodelet's agent always has a cluster to ask, so they are on.
    serverTLSBootstrap: bool('serverTLSBootstrap', file.serverTLSBootstrap, true),
    rotateCertificates: bool('rotateCertificates', file.rotateCertificates, true),
    tracingEndpoint: tracingEndpoint(flags.tracingEndpoint !== undefined ? '--tracing-endpoint' : 'tracing.endpoint', flags.tracingEndpoint ?? str('tracing.endpoint', file.tracing?.endpoint)),
    anonymousAuth: bool('authentication.anonymous.enabled', file.authentication?.anonymous?.enabled, false),
    webhookAuth: bool('authentication.webhook.enabled', file.authentication?.webhook?.enabled, true),
    webhookCacheTTLMs: duration('authentication.webhook.cacheTTL', file.authentication?.webhook?.cacheTTL, '2m'),
    clientCAFile: str('authentication.x509.clientCAFile', file.authentication?.x509?.clientCAFile),
    authorizationMode: oneOf('authorization.mode', file.authorization?.mode, ['Webhook', 'AlwaysAllow'] as const, 'Webhook'),
    authorizationCacheAuthorizedTTLMs: duration('authorization.webhook.cacheAuthorizedTTL', file.authorization?.webhook?.cacheAuthorizedTTL, '5m'),
    authorizationCacheUnauthorizedTTLMs: duration('authorization.webhook.cacheUnauthorizedTTL', file.authorization?.webhook?.cacheUnauthorizedTTL, '30s'),
    containerRuntimeEndpoint: runtimeEp,
    imageServiceEndpoint: imageEndpoint(file, runtimeEp),
    runtimeRequestTimeoutMs: duration('runtimeRequestTimeout', file.runtimeRequestTimeout, '2m'),
    nodeStatusUpdateFrequencyMs: duration('nodeStatusUpdateFrequency', file.nodeStatusUpdateFrequency, '10s'),
    nodeStatusReportFrequencyMs: duration('nodeStatusReportFrequency', file.nodeStatusReportFrequency, '5m'),
    // kubelet's field is an int32 (its validation refuses values below -1).
    nodeStatusMaxImages: int('nodeStatusMaxImages', file.nodeStatusMaxImages, 50, -1, 2 ** 31 - 1),
    nodeLeaseDurationSeconds: leaseS,
    syncFrequencyMs: duration('syncFrequency', file.syncFrequency, '1m'),
    fileCheckFrequencyMs: duration('fileCheckFrequency', file.fileCheckFrequency, '20s'),
    staticPodPath: flags.podManifestPath ?? str('staticPodPath', file.staticPodPath),
    podCIDR: cidr(flags.podCidr !== undefined ? '--pod-cidr' : 'podCIDR', flags.podCidr ?? str('podCIDR', file.podCIDR)),
    maxPods: int('maxPods', file.maxPods, 110, 1),
    podPidsLimit: pidsLimit,
    cgroupsPerQOS,
    cgroupRoot,
    allowedUnsafeSysctls: unsafeSysctls(file.allowedUnsafeSysctls),
    seccompDefault: bool('seccompDefault', file.seccompDefault, false),
    // kubelet's `Cache` (a TTL cache) is not implemented: refused, not taken for another.
    configMapAndSecretChangeDetectionStrategy: oneOf('configMapAndSecretChangeDetectionStrategy', file.configMapAndSecretChangeDetectionStrategy, ['Watch', 'Get'] as const, 'Watch'),
    systemReserved: reserved('systemReserved', file.systemReserved),
    kubeReserved: reserved('kubeReserved', file.kubeReserved),
    ...resolveEvictionConfig(file),
    imageGCHighThresholdPercent: high,
    imageGCLowThresholdPercent: low,
    imageMinimumGCAgeMs: duration('imageMinimumGCAge', file.imageMinimumGCAge, '2m'),
    ...imageGcCron(file.imageGCScheduleCron),
    serializeImagePulls: serialize,
    maxParallelImagePulls: serialize ? 1 : int('maxParallelImagePulls', file.maxParallelImagePulls, 5, 1),
    registerNode: bool('registerNode', file.registerNode, true),
    ...(str('providerID', file.providerID) ? { providerID: str('providerID', file.providerID) } : {}),
    podLogsDir: str('podLogsDir', file.podLogsDir) ?? '/var/log/pods',
    containerLogMaxSizeBytes: logSize(flags.containerLogMaxSize !== undefined ? '--container-log-max-size' : 'containerLogMaxSize', flags.containerLogMaxSize ?? file.containerLogMaxSize),
    containerLogMaxFiles: int(flags.containerLogMaxFiles !== undefined ? '--container-log-max-files' : 'containerLogMaxFiles', flags.containerLogMaxFiles ?? file.containerLogMaxFiles, 5, 2),
    containerLogMonitorIntervalMs: duration('containerLogMonitorInterval', file.containerLogMonitorInterval, '10s'),
    crashLoopInitialMs: duration('crashLoopBackOff.initialContainerRestartPeriod', file.crashLoopBackOff?.initialContainerRestartPeriod, '10s'),
    crashLoopMaxMs: duration('crashLoopBackOff.maxContainerRestartPeriod', file.crashLoopBackOff?.maxContainerRestartPeriod, '5m'),
    ...shutdownGrace(file),
    nodeLabels: { ...(file.nodeLabels ?? {}) },
    cniBinDir: flags.cniBinDir ?? str('cniBinDir', file.cniBinDir) ?? '/opt/cni/bin',
    cniConfDir: flags.cniConfDir ?? str('cniConfDir', file.cniConfDir) ?? '/etc/cni/net.d',
    cniPluginDirs: file.cniPluginDirs ?? ['/usr/lib/cni', '/opt/cni/bin'],
    cniSocketPath: str('cniSocketPath', file.cniSocketPath) ?? `${rootDir}/cni.sock`,
    cniBridgeName: str('cniBridgeName', file.cniBridgeName) ?? 'cni0',
    cniCacheDir: str('cniCacheDir', file.cniCacheDir) ?? '/var/lib/cni',
    cniIpamDataDir: str('cniIpamDataDir', file.cniIpamDataDir),
    nodeIP: flags.nodeIp ?? str('nodeIP', file.nodeIP),
    rootDir,
    proxy: resolveProxyConfig(file.proxy, flags),
    podNetwork: {
      backend: oneOf(flags.podNetwork !== undefined ? '--pod-network' : 'podNetwork.backend', flags.podNetwork ?? file.podNetwork?.backend, ['host-gw', 'vxlan', 'none'] as const, 'host-gw'),
      vxlan: vxlanOptions(int('podNetwork.vxlanVNI', file.podNetwork?.vxlanVNI, VXLAN_DEFAULTS.vni, 1, 16_777_215),
        int('podNetwork.vxlanPort', file.podNetwork?.vxlanPort, VXLAN_DEFAULTS.port, 1, 65_535)),
    },
    ...resolveDnsConfig(file, flags),
  };
}

/** `imageGCScheduleCron`: a 5-field cron schedule, checked at start. */
function imageGcCron(v: unknown): { imageGCScheduleCron?: string } {
  if (v === undefined || v === null || v === '') return {};
  if (typeof v !== 'string') throw invalid('imageGCScheduleCron', `must be a cron schedule string, got ${JSON.stringify(v)}`);
  const problem = cronProblem(v);
  if (problem) throw invalid('imageGCScheduleCron', problem);
  return { imageGCScheduleCron: v.trim() };
}

/** One VNI's VXLAN settings: its device is `nodelet.<vni>`, so two clusters' agents on one machine use two devices. */
function vxlanOptions(vni: number, port: number): { vni: number; port: number; device: string } {
  return { vni, port, device: vxlanDeviceName(vni) };
}
