/**
 * `GET /configz`: the agent's effective configuration as kubelet serves it,
 * `{"kubeletconfig": {...}}` with kubelet.config.k8s.io/v1beta1 field names, durations in Go's
 * time.Duration form ("10s", "2m0s") and quantities as the API writes them. Built from the
 * resolved AgentConfig, so it shows defaults and flag overrides, not the file as written.
 * nodelet-only settings (CNI, proxy, node-local DNS) are left out, as kubelet has no such fields.
 */
import { formatBytes } from '../util/quantity.js';
import type { AgentConfig } from './config.js';

/** Milliseconds as Go's Duration.String() writes them: "0s", "500ms", "10s", "2m0s", "1h0m0s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

/** Reserved resources back as quantities: cpu in millicores, pid as a count, the rest in bytes. */
const quantities = (r: Record<string, number>): Record<string, string> =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'cpu' ? `${Math.round(v * 1000)}m` : k === 'pid' ? String(v) : formatBytes(v)]));

/** The /configz body for `c`. */
export function configz(c: AgentConfig): { kubeletconfig: Record<string, unknown> } {
  return {
    kubeletconfig: {
      enableServer: true,
      staticPodPath: c.staticPodPath ?? '',
      syncFrequency: goDuration(c.syncFrequencyMs),
      fileCheckFrequency: goDuration(c.fileCheckFrequencyMs),
      address: c.address,
      port: c.port,
      tlsCertFile: c.tlsCertFile ?? '',
      tlsPrivateKeyFile: c.tlsPrivateKeyFile ?? '',
      rotateCertificates: c.rotateCertificates,
      serverTLSBootstrap: c.serverTLSBootstrap,
      authentication: {
        x509: { clientCAFile: c.clientCAFile ?? '' },
        webhook: { enabled: c.webhookAuth, cacheTTL: goDuration(c.webhookCacheTTLMs) },
        anonymous: { enabled: c.anonymousAuth },
      },
      authorization: {
        mode: c.authorizationMode,
        webhook: { cacheAuthorizedTTL: goDuration(c.authorizationCacheAuthorizedTTLMs), cacheUnauthorizedTTL: goDuration(c.authorizationCacheUnauthorizedTTLMs) },
      },
      healthzPort: c.healthzPort,
      healthzBindAddress: c.healthzBindAddress,
      clusterDomain: c.clusterDomain,
      clusterDNS: c.clusterDNS,
      nodeStatusUpdateFrequency: goDuration(c.nodeStatusUpdateFrequencyMs),
      nodeStatusReportFrequency: goDuration(c.nodeStatusReportFrequencyMs),
      nodeStatusMaxImages: c.nodeStatusMaxImages,
      nodeLeaseDurationSeconds: c.nodeLeaseDurationSeconds,
      imageMinimumGCAge: goDuration(c.imageMinimumGCAgeMs),
      ...(c.imageGCScheduleCron ? { imageGCScheduleCron: c.imageGCScheduleCron } : {}),
      imageGCHighThresholdPercent: c.imageGCHighThresholdPercent,
      imageGCLowThresholdPercent: c.imageGCLowThresholdPercent,
      cgroupsPerQOS: c.cgroupsPerQOS,
      cgroupRoot: c.cgroupRoot,
      cgroupDriver: 'cgroupfs',
      runtimeRequestTimeout: goDuration(c.runtimeRequestTimeoutMs),
      podCIDR: c.podCIDR ?? '',
      maxPods: c.maxPods,
      podPidsLimit: c.podPidsLimit,
      resolvConf: c.resolvConf,
      serializeImagePulls: c.serializeImagePulls,
      ...(c.serializeImagePulls ? {} : { maxParallelImagePulls: c.maxParallelImagePulls }),
      evictionHard: c.evictionHard,
      evictionPressureTransitionPeriod: goDuration(c.evictionPressureTransitionPeriodMs),
      evictionMaxPodGracePeriod: c.evictionMaxPodGracePeriodS,
      systemReserved: quantities(c.systemReserved),
      kubeReserved: quantities(c.kubeReserved),
      allowedUnsafeSysctls: c.allowedUnsafeSysctls,
      seccompDefault: c.seccompDefault,
      configMapAndSecretChangeDetectionStrategy: c.configMapAndSecretChangeDetectionStrategy,
      containerRuntimeEndpoint: c.containerRuntimeEndpoint,
      imageServiceEndpoint: c.imageServiceEndpoint,
      registerNode: c.registerNode,
      providerID: c.providerID ?? '',
      podLogsDir: c.podLogsDir,
      containerLogMaxSize: formatBytes(c.containerLogMaxSizeBytes),
      containerLogMaxFiles: c.containerLogMaxFiles,
      containerLogMonitorInterval: goDuration(c.containerLogMonitorIntervalMs),
      crashLoopBackOff: { maxContainerRestartPeriod: goDuration(c.crashLoopMaxMs) },
      shutdownGracePeriod: goDuration(c.shutdownGracePeriodMs),
      shutdownGracePeriodCriticalPods: goDuration(c.shutdownGracePeriodCriticalPodsMs),
      kind: 'KubeletConfiguration',
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
    },
  };
}
