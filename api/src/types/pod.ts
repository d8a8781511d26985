/**
 * core/v1 Pod: the subset of k8s.io/api/core/v1 that nodelet's agent, scheduler and controllers read
 * and write. JSON names are upstream's; optional exactly where upstream is `omitempty`.
 */
import type { KubeObject, LabelSelector, ObjectMeta, Time } from './meta.js';

/** A quantity string such as `100m`, `128Mi`, `1` (see `parseQuantity`). */
export type Quantity = string;

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: Quantity;
}

export interface ConfigMapKeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface SecretKeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVarSource {
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  configMapKeyRef?: ConfigMapKeySelector;
  secretKeyRef?: SecretKeySelector;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  hostIP?: string;
}

export interface ContainerResizePolicy {
  resourceName: 'cpu' | 'memory';
  restartPolicy: 'NotRequired' | 'RestartContainer';
}

export interface ResourceRequirements {
  limits?: Record<string, Quantity>;
  requests?: Record<string, Quantity>;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  /** subPath with `$(VAR)` references expanded from the container's environment. */
  subPathExpr?: string;
  mountPropagation?: 'None' | 'HostToContainer' | 'Bidirectional';
}

export interface ExecAction {
  command?: string[];
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPGetAction {
  path?: string;
  /** A number or the name of a container port. */
  port: number | string;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
  httpHeaders?: HTTPHeader[];
}

export interface TCPSocketAction {
  port: number | string;
  host?: string;
}

export interface GRPCAction {
  port: number;
  service?: string;
}

export interface Probe {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  grpc?: GRPCAction;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  sleep?: { seconds: number };
}

export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

export interface Capabilities {
  add?: string[];
  drop?: string[];
}

/** A seccomp or AppArmor profile (`localhostProfile` only with `Localhost`). */
export interface SecurityProfile {
  type: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhostProfile?: string;
}

export interface SELinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface SecurityContext {
  privileged?: boolean;
  seLinuxOptions?: SELinuxOptions;
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: Capabilities;
  procMount?: 'Default' | 'Unmasked';
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

export interface PodSecurityContext {
  seLinuxOptions?: SELinuxOptions;
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  fsGroup?: number;
  fsGroupChangePolicy?: 'Always' | 'OnRootMismatch';
  supplementalGroups?: number[];
  supplementalGroupsPolicy?: 'Merge' | 'Strict';
  sysctls?: Array<{ name: string; value: string }>;
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: ResourceRequirements;
  /** How each resource is resized in place (`pods/resize`); absent: NotRequired. */
  resizePolicy?: ContainerResizePolicy[];
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: Lifecycle;
  terminationMessagePath?: string;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  securityContext?: SecurityContext;
  /** Only on initContainers: `Always` makes it a sidecar. */
  restartPolicy?: 'Always';
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: { apiVersion?: string; fieldPath: string };
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: Quantity };
  mode?: number;
}

export interface VolumeProjection {
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: '' | 'Memory'; sizeLimit?: Quantity };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  hostPath?: {
    path: string;
    type?: '' | 'DirectoryOrCreate' | 'Directory' | 'FileOrCreate' | 'File' | 'Socket' | 'CharDevice' | 'BlockDevice';
  };
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  topologyKey: string;
  namespaceSelector?: LabelSelector;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

export interface PodAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
}

export interface Affinity {
  nodeAffinity?: NodeAffinity;
  podAffinity?: PodAffinity;
  podAntiAffinity?: PodAffinity;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: TaintEffect | '';
  tolerationSeconds?: number;
}

export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: Array<{ name: string; value?: string }>;
}

/** A debugging container added to a running pod (pods/ephemeralcontainers). */
export interface EphemeralContainer extends Container {
  /** The container whose process namespace this one joins. */
  targetContainerName?: string;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: EphemeralContainer[];
  volumes?: Volume[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None';
  dnsConfig?: PodDNSConfig;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  /** Deprecated alias of serviceAccountName, still defaulted by the apiserver. */
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  hostname?: string;
  subdomain?: string;
  setHostnameAsFQDN?: boolean;
  securityContext?: PodSecurityContext;
  imagePullSecrets?: Array<{ name?: string }>;
  affinity?: Affinity;
  topologySpreadConstraints?: TopologySpreadConstraint[];
  schedulingGates?: Array<{ name: string }>;
  schedulerName?: string;
  tolerations?: Toleration[];
  priorityClassName?: string;
  priority?: number;
  enableServiceLinks?: boolean;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
  /** node.k8s.io/v1 RuntimeClass whose handler runs the pod (the runtime's default when unset). */
  runtimeClassName?: string;
  /** Resources the pod's sandbox takes beyond its containers; set by RuntimeClass admission. */
  overhead?: Record<string, Quantity>;
  /** Extra lines of the pod's agent-managed /etc/hosts. */
  hostAliases?: HostAlias[];
  /** One PID namespace for all the pod's containers. */
  shareProcessNamespace?: boolean;
  /** Conditions that must be True, besides the containers' readiness, for the pod to be Ready. */
  readinessGates?: Array<{ conditionType: string }>;
  /** false asks for a user namespace. */
  hostUsers?: boolean;
}

export interface HostAlias {
  ip: string;
  hostnames?: string[];
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export type PodConditionType = 'PodScheduled' | 'PodReadyToStartContainers' | 'Initialized' | 'ContainersReady' | 'Ready' | 'DisruptionTarget';

export interface PodCondition {
  type: PodConditionType | string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: Time | null;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: Time;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: Time;
  finishedAt?: Time;
  containerID?: string;
}

/** Exactly one member is set. */
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
  /** Requests the node allocated to the container (in-place resize). */
  allocatedResources?: Record<string, string>;
  /** Requests and limits the running container is configured with (in-place resize). */
  resources?: ResourceRequirements;
}

export interface PodIP {
  ip: string;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: PodIP[];
  podIP?: string;
  podIPs?: PodIP[];
  startTime?: Time;
  initContainerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: 'Guaranteed' | 'Burstable' | 'BestEffort';
  nominatedNodeName?: string;
}

export interface Pod extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Pod';
  metadata: ObjectMeta;
  spec?: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}
