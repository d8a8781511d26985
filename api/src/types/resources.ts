/**
 * The registry of resources nodelet serves and talks to: group/version/kind/plural/scope. The
 * client builds URLs from it; the server (control-plane) builds discovery from the same facts.
 */
import type { KubeObject } from './meta.js';
import type { Pod } from './pod.js';
import type { Node } from './node.js';
import type { ConfigMap, Endpoints, Event, Namespace, Secret, Service, ServiceAccount } from './core.js';
import type { ControllerRevision, DaemonSet, Deployment, PodTemplate, ReplicaSet, ReplicationController, StatefulSet } from './apps.js';
import type { CronJob, Job } from './batch.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './storage.js';
import type { EndpointSlice, Lease } from './misc.js';
import type { PodDisruptionBudget } from './policy.js';
import type { RuntimeClass } from './node-k8s.js';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from './rbac.js';
import type { CertificateSigningRequest } from './certificates.js';
import type { LimitRange, PriorityClass, ResourceQuota } from './quota.js';
import type { Ingress, IngressClass, NetworkPolicy } from './networking.js';
import type { HorizontalPodAutoscaler } from './autoscaling.js';
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from './admissionregistration.js';
import type { CustomResourceDefinition } from './apiextensions.js';

/**
 * Describes one REST resource. `T` is a phantom type so that `client.resource(PODS)` is typed as
 * `ResourceClient<Pod>` without a cast.
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  /** API group; `''` for the core ("legacy") group served under `/api`. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  readonly subresources?: readonly string[];
  /** Never set at runtime; carries the object type. */
  readonly __object?: T;
}

function define<T extends KubeObject>(r: Omit<ResourceType<T>, '__object'>): ResourceType<T> {
  return Object.freeze({ ...r });
}

export const NAMESPACES = define<Namespace>({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', singular: 'namespace', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'] });
export const NODES = define<Node>({ group: '', version: 'v1', kind: 'Node', plural: 'nodes', singular: 'node', namespaced: false, shortNames: ['no'], subresources: ['status'] });
export const PODS = define<Pod>({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', namespaced: true, shortNames: ['po'], subresources: ['status', 'binding', 'eviction', 'log', 'exec'] });
export const EVENTS = define<Event>({ group: '', version: 'v1', kind: 'Event', plural: 'events', singular: 'event', namespaced: true, shortNames: ['ev'] });
export const CONFIGMAPS = define<ConfigMap>({ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', namespaced: true, shortNames: ['cm'] });
export const SECRETS = define<Secret>({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', singular: 'secret', namespaced: true });
export const SERVICES = define<Service>({ group: '', version: 'v1', kind: 'Service', plural: 'services', singular: 'service', namespaced: true, shortNames: ['svc'], subresources: ['status'] });
export const ENDPOINTS = define<Endpoints>({ group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', singular: 'endpoints', namespaced: true, shortNames: ['ep'] });
export const SERVICEACCOUNTS = define<ServiceAccount>({ group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', singular: 'serviceaccount', namespaced: true, shortNames: ['sa'] });
export const ENDPOINTSLICES = define<EndpointSlice>({ group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices', singular: 'endpointslice', namespaced: true });
export const LEASES = define<Lease>({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', singular: 'lease', namespaced: true });
export const DEPLOYMENTS = define<Deployment>({ group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', singular: 'deployment', namespaced: true, shortNames: ['deploy'], subresources: ['status', 'scale'] });
export const REPLICASETS = define<ReplicaSet>({ group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', singular: 'replicaset', namespaced: true, shortNames: ['rs'], subresources: ['status', 'scale'] });
export const DAEMONSETS = define<DaemonSet>({ group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', singular: 'daemonset', namespaced: true, shortNames: ['ds'], subresources: ['status'] });
export const STATEFULSETS = define<StatefulSet>({ group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', singular: 'statefulset', namespaced: true, shortNames: ['sts'], subresources: ['status', 'scale'] });
export const CONTROLLERREVISIONS = define<ControllerRevision>({ group: 'apps', version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions', singular: 'controllerrevision', namespaced: true });
export const JOBS = define<Job>({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', singular: 'job', namespaced: true, subresources: ['status'] });
export const CRONJOBS = define<CronJob>({ group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', singular: 'cronjob', namespaced: true, shortNames: ['cj'], subresources: ['status'] });
export const PERSISTENTVOLUMES = define<PersistentVolume>({ group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', singular: 'persistentvolume', namespaced: false, shortNames: ['pv'], subresources: ['status'] });
export const PERSISTENTVOLUMECLAIMS = define<PersistentVolumeClaim>({ group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', namespaced: true, shortNames: ['pvc'], subresources: ['status'] });
export const STORAGECLASSES = define<StorageClass>({ group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass', plural: 'storageclasses', singular: 'storageclass', namespaced: false, shortNames: ['sc'] });
export const PODDISRUPTIONBUDGETS = define<PodDisruptionBudget>({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', singular: 'poddisruptionbudget', namespaced: true, shortNames: ['pdb'], subresources: ['status'] });
export const RUNTIMECLASSES = define<RuntimeClass>({ group: 'node.k8s.io', version: 'v1', kind: 'RuntimeClass', plural: 'runtimeclasses', singular: 'runtimeclass', namespaced: false });
export const RESOURCEQUOTAS = define<ResourceQuota>({ group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', singular: 'resourcequota', namespaced: true, shortNames: ['quota'], subresources: ['status'] });
export const LIMITRANGES = define<LimitRange>({ group: '', version: 'v1', kind: 'LimitRange', plural: 'limitranges', singular: 'limitrange', namespaced: true, shortNames: ['limits'] });
export const HORIZONTALPODAUTOSCALERS = define<HorizontalPodAutoscaler>({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', namespaced: true, shortNames: ['hpa'], subresources: ['status'] });
export const PRIORITYCLASSES = define<PriorityClass>({ group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass', plural: 'priorityclasses', singular: 'priorityclass', namespaced: false, shortNames: ['pc'] });
export const INGRESSES = define<Ingress>({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', singular: 'ingress', namespaced: true, shortNames: ['ing'], subresources: ['status'] });
export const INGRESSCLASSES = define<IngressClass>({ group: 'networking.k8s.io', version: 'v1', kind: 'IngressClass', plural: 'ingressclasses', singular: 'ingressclass', namespaced: false });
export const NETWORKPOLICIES = define<NetworkPolicy>({ group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', singular: 'networkpolicy', namespaced: true, shortNames: ['netpol'] });
export const REPLICATIONCONTROLLERS = define<ReplicationController>({ group: '', version: 'v1', kind: 'ReplicationController', plural: 'replicationcontrollers', singular: 'replicationcontroller', namespaced: true, shortNames: ['rc'], subresources: ['status', 'scale'] });
export const PODTEMPLATES = define<PodTemplate>({ group: '', version: 'v1', kind: 'PodTemplate', plural: 'podtemplates', singular: 'podtemplate', namespaced: true });
export const ROLES = define<Role>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', singular: 'role', namespaced: true });
export const CLUSTERROLES = define<ClusterRole>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', singular: 'clusterrole', namespaced: false });
export const ROLEBINDINGS = define<RoleBinding>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', singular: 'rolebinding', namespaced: true });
export const CERTIFICATESIGNINGREQUESTS = define<CertificateSigningRequest>({ group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests', singular: 'certificatesigningrequest', namespaced: false, shortNames: ['csr'], subresources: ['status', 'approval'] });
export const CLUSTERROLEBINDINGS = define<ClusterRoleBinding>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', singular: 'clusterrolebinding', namespaced: false });
export const MUTATINGWEBHOOKCONFIGURATIONS = define<MutatingWebhookConfiguration>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', singular: 'mutatingwebhookconfiguration', namespaced: false });
export const VALIDATINGWEBHOOKCONFIGURATIONS = define<ValidatingWebhookConfiguration>({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', singular: 'validatingwebhookconfiguration', namespaced: false });
export const CUSTOMRESOURCEDEFINITIONS = define<CustomResourceDefinition>({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', singular: 'customresourcedefinition', namespaced: false, shortNames: ['crd', 'crds'], subresources: ['status'] });

/** Every resource above, in discovery order. */
export const RESOURCES: readonly ResourceType[] = Object.freeze([
  NAMESPACES, NODES, PODS, EVENTS, CONFIGMAPS, SECRETS, SERVICES, ENDPOINTS, SERVICEACCOUNTS,
  ENDPOINTSLICES, LEASES, DEPLOYMENTS, REPLICASETS, DAEMONSETS, STATEFULSETS, CONTROLLERREVISIONS, JOBS, CRONJOBS,
  PERSISTENTVOLUMES, PERSISTENTVOLUMECLAIMS, STORAGECLASSES, PODDISRUPTIONBUDGETS, RUNTIMECLASSES, ROLES, CLUSTERROLES, ROLEBINDINGS, CLUSTERROLEBINDINGS,
  CERTIFICATESIGNINGREQUESTS, RESOURCEQUOTAS, LIMITRANGES, PRIORITYCLASSES, HORIZONTALPODAUTOSCALERS, MUTATINGWEBHOOKCONFIGURATIONS, VALIDATINGWEBHOOKCONFIGURATIONS,
  CUSTOMRESOURCEDEFINITIONS,
  INGRESSES, INGRESSCLASSES, NETWORKPOLICIES, REPLICATIONCONTROLLERS, PODTEMPLATES,
] as ResourceType[]);

/**
 * The resource types of an Established CRD's served versions (custom resources are not in
 * {@link RESOURCES}: they come and go while the cluster runs). Empty while it is not Established.
 */
export function customResourceTypes(crd: CustomResourceDefinition): ResourceType[] {
  const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  if (!established || crd.metadata.deletionTimestamp) return [];
  const { group, names, scope } = crd.spec;
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v) => define({ group, version: v.name, kind: names.kind, plural: names.plural, singular: names.singular ?? names.kind.toLowerCase(), namespaced: scope === 'Namespaced', ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}) }));
}

/** `v1` for the core group, `<group>/<version>` otherwise (the `apiVersion` field). */
export function apiVersionOf(r: Pick<ResourceType, 'group' | 'version'>): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** Looks a resource up by `apiVersion` + `kind` (as found in an object or ownerReference). */
export function findResourceByKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.kind === kind && apiVersionOf(r) === apiVersion);
}

/** Looks a resource up by group + plural (as found in a URL). */
export function findResourceByPlural(group: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.plural === plural);
}

export interface ResourcePathParts {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * The REST path of a collection, object or subresource:
 * `/api/v1/namespaces/default/pods/web/status`, `/apis/apps/v1/deployments`.
 * A namespace without a name on a namespaced resource selects that namespace's collection; no
 * namespace on a namespaced resource means all namespaces.
 */
export function resourcePath(p: ResourcePathParts): string {
  if (p.subresource !== undefined && p.name === undefined) {
    throw new TypeError(`subresource "${p.subresource}" needs an object name`);
  }
  let path = p.group === '' ? `/api/${p.version}` : `/apis/${enc(p.group)}/${enc(p.version)}`;
  if (p.namespace !== undefined && p.namespace !== '') path += `/namespaces/${enc(p.namespace)}`;
  path += `/${enc(p.plural)}`;
  if (p.name !== undefined) path += `/${enc(p.name)}`;
  if (p.subresource !== undefined) path += `/${enc(p.subresource)}`;
  return path;
}

function enc(segment: string): string {
  if (segment === '' || segment === '.' || segment === '..') {
    throw new TypeError(`invalid path segment "${segment}"`);
  }
  return encodeURIComponent(segment);
}
