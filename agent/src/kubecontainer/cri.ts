/**
 * The CRI surface the agent uses, as types derived from `@nodelet/cri-client` (the agent may not
 * import `@nodelet/proto` directly: imports go downward through cri-client, docs/architecture.md).
 */
import type { ImageService, RuntimeService } from '@nodelet/cri-client';

export type { ImageService, RuntimeService } from '@nodelet/cri-client';

type Req<K extends keyof RuntimeService> = Parameters<RuntimeService[K]>[0];
type Res<K extends keyof RuntimeService> = Awaited<ReturnType<RuntimeService[K]>>;
type ImageRes<K extends keyof ImageService> = Awaited<ReturnType<ImageService[K]>>;

export type PodSandboxConfig = NonNullable<Req<'runPodSandbox'>['config']>;
export type ContainerConfig = NonNullable<Req<'createContainer'>['config']>;
export type CriSandbox = Res<'listPodSandbox'>['items'][number];
export type CriContainer = Res<'listContainers'>['containers'][number];
export type CriContainerStatus = NonNullable<Res<'containerStatus'>['status']>;
export type CriSandboxStatus = NonNullable<Res<'podSandboxStatus'>['status']>;
export type CriStatus = Res<'status'>;
export type CriVersion = Res<'version'>;
export type PortMapping = NonNullable<PodSandboxConfig['portMappings']>[number];
export type Mount = NonNullable<ContainerConfig['mounts']>[number];
export type LinuxContainerResources = NonNullable<NonNullable<ContainerConfig['linux']>['resources']>;
/** One image of CRI ListImages. */
export type CriImage = ImageRes<'listImages'>['images'][number];
