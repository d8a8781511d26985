/**
 * The RPC table: for every client method, its service, gRPC method name, default deadline and
 * whether it may be retried transparently after a connection failure. One table so that deadlines,
 * retries and error messages are decided in one place.
 */
import type { ImageService, RuntimeService } from './types.js';

/** kubelet's RuntimeRequestTimeout. */
export const DEFAULT_TIMEOUT_MS = 2 * 60_000;
/** kubelet gives RunPodSandbox twice the runtime timeout: CNI runs inside the call. */
export const RUN_POD_SANDBOX_TIMEOUT_MS = 2 * DEFAULT_TIMEOUT_MS;
/** Pulls of big images over slow links take long; the kubelet has no deadline at all here. */
export const PULL_IMAGE_TIMEOUT_MS = 15 * 60_000;

export interface MethodInfo {
  service: 'RuntimeService' | 'ImageService';
  /** The gRPC method name, e.g. `RunPodSandbox`. */
  rpc: string;
  timeoutMs: number;
  /**
   * Safe to resend when the runtime was unreachable (reads, and Stop/Remove which are idempotent
   * by contract). Never true for Run/Create/Start: a resend after a lost reply would act twice.
   */
  retryUnavailable: boolean;
  streaming?: boolean;
}

function r(rpc: string, retryUnavailable: boolean, timeoutMs = DEFAULT_TIMEOUT_MS): MethodInfo {
  return { service: 'RuntimeService', rpc, timeoutMs, retryUnavailable };
}
function i(rpc: string, retryUnavailable: boolean, timeoutMs = DEFAULT_TIMEOUT_MS): MethodInfo {
  return { service: 'ImageService', rpc, timeoutMs, retryUnavailable };
}

export const RUNTIME_METHODS: { readonly [K in keyof RuntimeService]: MethodInfo } = {
  version: r('Version', true),
  runPodSandbox: r('RunPodSandbox', false, RUN_POD_SANDBOX_TIMEOUT_MS),
  stopPodSandbox: r('StopPodSandbox', true),
  removePodSandbox: r('RemovePodSandbox', true),
  podSandboxStatus: r('PodSandboxStatus', true),
  listPodSandbox: r('ListPodSandbox', true),
  createContainer: r('CreateContainer', false),
  startContainer: r('StartContainer', false),
  stopContainer: r('StopContainer', true),
  removeContainer: r('RemoveContainer', true),
  listContainers: r('ListContainers', true),
  containerStatus: r('ContainerStatus', true),
  updateContainerResources: r('UpdateContainerResources', true),
  reopenContainerLog: r('ReopenContainerLog', true),
  execSync: r('ExecSync', false),
  exec: r('Exec', false),
  attach: r('Attach', false),
  portForward: r('PortForward', false),
  containerStats: r('ContainerStats', true),
  listContainerStats: r('ListContainerStats', true),
  podSandboxStats: r('PodSandboxStats', true),
  listPodSandboxStats: r('ListPodSandboxStats', true),
  updateRuntimeConfig: r('UpdateRuntimeConfig', true),
  status: r('Status', true),
  checkpointContainer: r('CheckpointContainer', false),
  getContainerEvents: { ...r('GetContainerEvents', false), streaming: true },
  listMetricDescriptors: r('ListMetricDescriptors', true),
  listPodSandboxMetrics: r('ListPodSandboxMetrics', true),
};

export const IMAGE_METHODS: { readonly [K in keyof ImageService]: MethodInfo } = {
  listImages: i('ListImages', true),
  imageStatus: i('ImageStatus', true),
  pullImage: i('PullImage', false, PULL_IMAGE_TIMEOUT_MS),
  removeImage: i('RemoveImage', true),
  imageFsInfo: i('ImageFsInfo', true),
};

/**
 * The object a request is about, for error messages: `sandbox "…"`, `container "…"`, `image "…"`,
 * or the pod name of a RunPodSandbox / container name of a CreateContainer.
 */
export function subjectOf(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const q = request as {
    containerId?: string;
    podSandboxId?: string;
    image?: { image?: string } | null;
    config?: { metadata?: { name?: string; namespace?: string } | null } | null;
  };
  const md = q.config?.metadata;
  if (q.containerId) return `container "${q.containerId}"`;
  if (q.podSandboxId && md?.name) return `container "${md.name}" in sandbox "${q.podSandboxId}"`;
  if (q.podSandboxId) return `sandbox "${q.podSandboxId}"`;
  if (q.image?.image) return `image "${q.image.image}"`;
  if (md?.name) return md.namespace ? `pod "${md.namespace}/${md.name}"` : `"${md.name}"`;
  return undefined;
}
