// k8s.io/api core/v1 generated.proto: Pod with its spec and status, as far as nodelet's Pod type
// (api/src/types/pod.ts) goes, so the pods the agent watches travel as protobuf. Names and field
// numbers are upstream's. Three fields are inlined in JSON (Go embeds the struct) but nested in
// protobuf: `localObjectReference` (the key selectors, env and volume sources), `handler` (Probe)
// and `volumeSource` (Volume); the codec flattens them (INLINE_FIELDS in ./decode.ts).
import { META, kindMessage } from './schema-shapes.js';

const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';

export const CORE_V1_POD_PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;

message ObjectFieldSelector { optional string apiVersion = 1; optional string fieldPath = 2; }
message ResourceFieldSelector { optional string containerName = 1; optional string resource = 2; optional ${QUANTITY} divisor = 3; }
message ConfigMapKeySelector { optional LocalObjectReference localObjectReference = 1; optional string key = 2; optional bool optional = 3; }
message SecretKeySelector { optional LocalObjectReference localObjectReference = 1; optional string key = 2; optional bool optional = 3; }
message EnvVarSource {
  optional ObjectFieldSelector fieldRef = 1;
  optional ResourceFieldSelector resourceFieldRef = 2;
  optional ConfigMapKeySelector configMapKeyRef = 3;
  optional SecretKeySelector secretKeyRef = 4;
}
message EnvVar { optional string name = 1; optional string value = 2; optional EnvVarSource valueFrom = 3; }
message ConfigMapEnvSource { optional LocalObjectReference localObjectReference = 1; optional bool optional = 2; }
message SecretEnvSource { optional LocalObjectReference localObjectReference = 1; optional bool optional = 2; }
message EnvFromSource { optional string prefix = 1; optional ConfigMapEnvSource configMapRef = 2; optional SecretEnvSource secretRef = 3; }

message ContainerPort {
  optional string name = 1;
  optional int32 hostPort = 2;
  optional int32 containerPort = 3;
  optional string protocol = 4;
  optional string hostIP = 5;
}
message ResourceRequirements {
  map<string, ${QUANTITY}> limits = 1;
  map<string, ${QUANTITY}> requests = 2;
}
message VolumeMount {
  optional string name = 1;
  optional bool readOnly = 2;
  optional string mountPath = 3;
  optional string subPath = 4;
  optional string mountPropagation = 5;
  optional string subPathExpr = 6;
}

message ExecAction { repeated string command = 1; }
message HTTPHeader { optional string name = 1; optional string value = 2; }
message HTTPGetAction {
  optional string path = 1;
  optional ${INT_OR_STRING} port = 2;
  optional string host = 3;
  optional string scheme = 4;
  repeated HTTPHeader httpHeaders = 5;
}
message TCPSocketAction { optional ${INT_OR_STRING} port = 1; optional string host = 2; }
message GRPCAction { optional int32 port = 1; optional string service = 2; }
message SleepAction { optional int64 seconds = 1; }
message ProbeHandler {
  optional ExecAction exec = 1;
  optional HTTPGetAction httpGet = 2;
  optional TCPSocketAction tcpSocket = 3;
  optional GRPCAction grpc = 4;
}
message Probe {
  optional ProbeHandler handler = 1;
  optional int32 initialDelaySeconds = 2;
  optional int32 timeoutSeconds = 3;
  optional int32 periodSeconds = 4;
  optional int32 successThreshold = 5;
  optional int32 failureThreshold = 6;
  optional int64 terminationGracePeriodSeconds = 7;
}
message LifecycleHandler {
  optional ExecAction exec = 1;
  optional HTTPGetAction httpGet = 2;
  optional TCPSocketAction tcpSocket = 3;
  optional SleepAction sleep = 4;
}
message Lifecycle { optional LifecycleHandler postStart = 1; optional LifecycleHandler preStop = 2; }

message Capabilities { repeated string add = 1; repeated string drop = 2; }
message SecurityContext {
  optional Capabilities capabilities = 1;
  optional bool privileged = 2;
  optional int64 runAsUser = 4;
  optional bool runAsNonRoot = 5;
  optional bool readOnlyRootFilesystem = 6;
  optional bool allowPrivilegeEscalation = 7;
  optional int64 runAsGroup = 8;
}
message Sysctl { optional string name = 1; optional string value = 2; }
message PodSecurityContext {
  optional int64 runAsUser = 2;
  optional bool runAsNonRoot = 3;
  repeated int64 supplementalGroups = 4;
  optional int64 fsGroup = 5;
  optional int64 runAsGroup = 6;
  repeated Sysctl sysctls = 7;
}

message Container {
  optional string name = 1;
  optional string image = 2;
  repeated string command = 3;
  repeated string args = 4;
  optional string workingDir = 5;
  repeated ContainerPort ports = 6;
  repeated EnvVar env = 7;
  optional ResourceRequirements resources = 8;
  repeated VolumeMount volumeMounts = 9;
  optional Probe livenessProbe = 10;
  optional Probe readinessProbe = 11;
  optional Lifecycle lifecycle = 12;
  optional string terminationMessagePath = 13;
  optional string imagePullPolicy = 14;
  optional SecurityContext securityContext = 15;
  optional bool stdin = 16;
  optional bool stdinOnce = 17;
  optional bool tty = 18;
  repeated EnvFromSource envFrom = 19;
  optional string terminationMessagePolicy = 20;
  optional Probe startupProbe = 22;
  optional string restartPolicy = 24;
}

message KeyToPath { optional string key = 1; optional string path = 2; optional int32 mode = 3; }
message DownwardAPIVolumeFile {
  optional string path = 1;
  optional ObjectFieldSelector fieldRef = 2;
  optional ResourceFieldSelector resourceFieldRef = 3;
  optional int32 mode = 4;
}
message HostPathVolumeSource { optional string path = 1; optional string type = 2; }
message EmptyDirVolumeSource { optional string medium = 1; optional ${QUANTITY} sizeLimit = 2; }
message SecretVolumeSource { optional string secretName = 1; repeated KeyToPath items = 2; optional int32 defaultMode = 3; optional bool optional = 4; }
message PersistentVolumeClaimVolumeSource { optional string claimName = 1; optional bool readOnly = 2; }
message DownwardAPIVolumeSource { repeated DownwardAPIVolumeFile items = 1; optional int32 defaultMode = 2; }
message ConfigMapVolumeSource { optional LocalObjectReference localObjectReference = 1; repeated KeyToPath items = 2; optional int32 defaultMode = 3; optional bool optional = 4; }
message SecretProjection { optional LocalObjectReference localObjectReference = 1; repeated KeyToPath items = 2; optional bool optional = 4; }
message ConfigMapProjection { optional LocalObjectReference localObjectReference = 1; repeated KeyToPath items = 2; optional bool optional = 4; }
message DownwardAPIProjection { repeated DownwardAPIVolumeFile items = 1; }
message ServiceAccountTokenProjection { optional string audience = 1; optional int64 expirationSeconds = 2; optional string path = 3; }
message VolumeProjection {
  optional SecretProjection secret = 1;
  optional DownwardAPIProjection downwardAPI = 2;
  optional ConfigMapProjection configMap = 3;
  optional ServiceAccountTokenProjection serviceAccountToken = 4;
}
message ProjectedVolumeSource { repeated VolumeProjection sources = 1; optional int32 defaultMode = 2; }
message VolumeSource {
  optional HostPathVolumeSource hostPath = 1;
  optional EmptyDirVolumeSource emptyDir = 2;
  optional SecretVolumeSource secret = 6;
  optional PersistentVolumeClaimVolumeSource persistentVolumeClaim = 10;
  optional DownwardAPIVolumeSource downwardAPI = 16;
  optional ConfigMapVolumeSource configMap = 19;
  optional ProjectedVolumeSource projected = 26;
}
message Volume { optional string name = 1; optional VolumeSource volumeSource = 2; }

message NodeSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message NodeSelectorTerm { repeated NodeSelectorRequirement matchExpressions = 1; repeated NodeSelectorRequirement matchFields = 2; }
message NodeSelector { repeated NodeSelectorTerm nodeSelectorTerms = 1; }
message PreferredSchedulingTerm { optional int32 weight = 1; optional NodeSelectorTerm preference = 2; }
message NodeAffinity {
  optional NodeSelector requiredDuringSchedulingIgnoredDuringExecution = 1;
  repeated PreferredSchedulingTerm preferredDuringSchedulingIgnoredDuringExecution = 2;
}
message PodAffinityTerm { optional ${META}.LabelSelector labelSelector = 1; repeated string namespaces = 2; optional string topologyKey = 3; }
message PodAffinity { repeated PodAffinityTerm requiredDuringSchedulingIgnoredDuringExecution = 1; }
message PodAntiAffinity { repeated PodAffinityTerm requiredDuringSchedulingIgnoredDuringExecution = 1; }
message Affinity { optional NodeAffinity nodeAffinity = 1; optional PodAffinity podAffinity = 2; optional PodAntiAffinity podAntiAffinity = 3; }

message Toleration {
  optional string key = 1;
  optional string operator = 2;
  optional string value = 3;
  optional string effect = 4;
  optional int64 tolerationSeconds = 5;
}
message PodDNSConfigOption { optional string name = 1; optional string value = 2; }
message PodDNSConfig { repeated string nameservers = 1; repeated string searches = 2; repeated PodDNSConfigOption options = 3; }

message PodSpec {
  repeated Volume volumes = 1;
  repeated Container containers = 2;
  optional string restartPolicy = 3;
  optional int64 terminationGracePeriodSeconds = 4;
  optional int64 activeDeadlineSeconds = 5;
  optional string dnsPolicy = 6;
  map<string, string> nodeSelector = 7;
  optional string serviceAccountName = 8;
  optional string serviceAccount = 9;
  optional string nodeName = 10;
  optional bool hostNetwork = 11;
  optional bool hostPID = 12;
  optional bool hostIPC = 13;
  optional PodSecurityContext securityContext = 14;
  repeated LocalObjectReference imagePullSecrets = 15;
  optional string hostname = 16;
  optional string subdomain = 17;
  optional Affinity affinity = 18;
  optional string schedulerName = 19;
  repeated Container initContainers = 20;
  optional bool automountServiceAccountToken = 21;
  repeated Toleration tolerations = 22;
  optional string priorityClassName = 24;
  optional int32 priority = 25;
  optional PodDNSConfig dnsConfig = 26;
  optional string runtimeClassName = 29;
  optional bool enableServiceLinks = 30;
  optional string preemptionPolicy = 31;
  map<string, ${QUANTITY}> overhead = 32;
  optional bool setHostnameAsFQDN = 35;
}

message PodCondition {
  optional string type = 1;
  optional string status = 2;
  optional ${META}.Time lastProbeTime = 3;
  optional ${META}.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message ContainerStateWaiting { optional string reason = 1; optional string message = 2; }
message ContainerStateRunning { optional ${META}.Time startedAt = 1; }
message ContainerStateTerminated {
  optional int32 exitCode = 1;
  optional int32 signal = 2;
  optional string reason = 3;
  optional string message = 4;
  optional ${META}.Time startedAt = 5;
  optional ${META}.Time finishedAt = 6;
  optional string containerID = 7;
}
message ContainerState {
  optional ContainerStateWaiting waiting = 1;
  optional ContainerStateRunning running = 2;
  optional ContainerStateTerminated terminated = 3;
}
message ContainerStatus {
  optional string name = 1;
  optional ContainerState state = 2;
  optional ContainerState lastState = 3;
  optional bool ready = 4;
  optional int32 restartCount = 5;
  optional string image = 6;
  optional string imageID = 7;
  optional string containerID = 8;
  optional bool started = 9;
}
message PodIP { optional string ip = 1; }
message HostIP { optional string ip = 1; }
message PodStatus {
  optional string phase = 1;
  repeated PodCondition conditions = 2;
  optional string message = 3;
  optional string reason = 4;
  optional string hostIP = 5;
  optional string podIP = 6;
  optional ${META}.Time startTime = 7;
  repeated ContainerStatus containerStatuses = 8;
  optional string qosClass = 9;
  repeated ContainerStatus initContainerStatuses = 10;
  optional string nominatedNodeName = 11;
  repeated PodIP podIPs = 12;
  repeated HostIP hostIPs = 16;
}

${kindMessage('PodTemplateSpec', { spec: 'PodSpec' })}
${kindMessage('Pod', { spec: 'PodSpec', status: 'PodStatus' })}
`;
