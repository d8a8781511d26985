/**
 * The typed surface of the CRI client: one camelCase async method per CRI v1 RPC. Requests are the
 * generated "permissive" types (every field optional); replies are the `__Output` types produced
 * by the loader options of @nodelet/proto (defaults filled in, int64 as decimal strings, enums as
 * their names).
 */
import type * as p from '@nodelet/proto';

/** Per-call options. Every call takes a signal and has a deadline. */
export interface CallOptions {
  /** Cancels the call: the gRPC call is cancelled and the promise rejects with an AbortError. */
  signal?: AbortSignal;
  /** Deadline for this call in ms; defaults per RPC (2 min; RunPodSandbox 4 min; PullImage 15 min). */
  timeoutMs?: number;
}

type Unary<Req, Res> = (request: Req, options?: CallOptions) => Promise<Res>;

/** runtime.v1.RuntimeService. StopX and RemoveX are idempotent on conforming runtimes. */
export interface RuntimeService {
  version: Unary<p.VersionRequest, p.VersionResponse__Output>;
  runPodSandbox: Unary<p.RunPodSandboxRequest, p.RunPodSandboxResponse__Output>;
  stopPodSandbox: Unary<p.StopPodSandboxRequest, p.StopPodSandboxResponse__Output>;
  removePodSandbox: Unary<p.RemovePodSandboxRequest, p.RemovePodSandboxResponse__Output>;
  podSandboxStatus: Unary<p.PodSandboxStatusRequest, p.PodSandboxStatusResponse__Output>;
  listPodSandbox: Unary<p.ListPodSandboxRequest, p.ListPodSandboxResponse__Output>;
  createContainer: Unary<p.CreateContainerRequest, p.CreateContainerResponse__Output>;
  startContainer: Unary<p.StartContainerRequest, p.StartContainerResponse__Output>;
  stopContainer: Unary<p.StopContainerRequest, p.StopContainerResponse__Output>;
  removeContainer: Unary<p.RemoveContainerRequest, p.RemoveContainerResponse__Output>;
  listContainers: Unary<p.ListContainersRequest, p.ListContainersResponse__Output>;
  containerStatus: Unary<p.ContainerStatusRequest, p.ContainerStatusResponse__Output>;
  updateContainerResources: Unary<p.UpdateContainerResourcesRequest, p.UpdateContainerResourcesResponse__Output>;
  reopenContainerLog: Unary<p.ReopenContainerLogRequest, p.ReopenContainerLogResponse__Output>;
  execSync: Unary<p.ExecSyncRequest, p.ExecSyncResponse__Output>;
  exec: Unary<p.ExecRequest, p.ExecResponse__Output>;
  attach: Unary<p.AttachRequest, p.AttachResponse__Output>;
  portForward: Unary<p.PortForwardRequest, p.PortForwardResponse__Output>;
  containerStats: Unary<p.ContainerStatsRequest, p.ContainerStatsResponse__Output>;
  listContainerStats: Unary<p.ListContainerStatsRequest, p.ListContainerStatsResponse__Output>;
  podSandboxStats: Unary<p.PodSandboxStatsRequest, p.PodSandboxStatsResponse__Output>;
  listPodSandboxStats: Unary<p.ListPodSandboxStatsRequest, p.ListPodSandboxStatsResponse__Output>;
  updateRuntimeConfig: Unary<p.UpdateRuntimeConfigRequest, p.UpdateRuntimeConfigResponse__Output>;
  status: Unary<p.StatusRequest, p.StatusResponse__Output>;
  checkpointContainer: Unary<p.CheckpointContainerRequest, p.CheckpointContainerResponse__Output>;
  /**
   * Server stream of container events. No default deadline (it is long-lived); end it with the
   * signal or by leaving the `for await` loop. containerd 1.6 fails it with ERR_UNIMPLEMENTED.
   */
  getContainerEvents(request: p.GetEventsRequest, options?: { signal?: AbortSignal }): AsyncIterable<p.ContainerEventResponse__Output>;
  listMetricDescriptors: Unary<p.ListMetricDescriptorsRequest, p.ListMetricDescriptorsResponse__Output>;
  listPodSandboxMetrics: Unary<p.ListPodSandboxMetricsRequest, p.ListPodSandboxMetricsResponse__Output>;
}

/** runtime.v1.ImageService. ImageStatus of an absent image resolves with `image: null`. */
export interface ImageService {
  listImages: Unary<p.ListImagesRequest, p.ListImagesResponse__Output>;
  imageStatus: Unary<p.ImageStatusRequest, p.ImageStatusResponse__Output>;
  pullImage: Unary<p.PullImageRequest, p.PullImageResponse__Output>;
  removeImage: Unary<p.RemoveImageRequest, p.RemoveImageResponse__Output>;
  imageFsInfo: Unary<p.ImageFsInfoRequest, p.ImageFsInfoResponse__Output>;
}

export interface CriClient {
  readonly runtime: RuntimeService;
  readonly image: ImageService;
  /** The endpoint as given, e.g. `unix:///run/containerd/containerd.sock`. */
  readonly endpoint: string;
  /** Closes the channel; in-flight calls fail with ERR_UNAVAILABLE. Idempotent. */
  close(): void;
}
