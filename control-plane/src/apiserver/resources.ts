/**
 * Every resource the server serves. One entry each: this is the only place to add a kind.
 * Subresources list what discovery advertises; handlers implement status/scale generically and
 * the pod-specific ones in handlers/ (pod-subresources.ts: binding; eviction.ts; node-proxy.ts: log, exec, attach, portforward; proxy.ts: pods, services and nodes proxy).
 */
import type { ResourceDef, SubresourceDef } from './resource.js';
import { podStrategy } from './strategies/pods.js';
import {
  configMapStrategy,
  deploymentStrategy,
  namespaceStrategy,
  nodeStrategy,
  plainStrategy,
  replicaSetStrategy,
  secretStrategy,
  serviceStrategy,
} from './strategies/others.js';
import { NODE_TABLE, POD_TABLE } from './table/pods-nodes.js';
import { CSR_TABLE, ROLE_TABLE, ROLEBINDING_TABLE } from './table/rbac.js';
import { certificateSigningRequestStrategy } from './strategies/certificates.js';
import { cronJobStrategy, jobStrategy } from './strategies/batch.js';
import { controllerRevisionStrategy, daemonSetStrategy, statefulSetStrategy } from './strategies/apps-controllers.js';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy, storageClassStrategy } from './strategies/storage.js';
import { CONTROLLERREVISION_TABLE, CRONJOB_TABLE, DAEMONSET_TABLE, JOB_TABLE, STATEFULSET_TABLE } from './table/workloads.js';
import { PERSISTENTVOLUMECLAIM_TABLE, PERSISTENTVOLUME_TABLE, STORAGECLASS_TABLE } from './table/storage.js';
import { podDisruptionBudgetStrategy } from './strategies/policy.js';
import { CRD_TABLE, crdStrategy } from './apiextensions/crd-strategy.js';
import { runtimeClassStrategy } from './strategies/node-k8s.js';
import { mutatingWebhookConfigurationStrategy, validatingWebhookConfigurationStrategy } from './admission/webhook/config-strategy.js';
import { WEBHOOK_CONFIGURATION_TABLE } from './admission/webhook/table.js';
import { PODDISRUPTIONBUDGET_TABLE, RUNTIMECLASS_TABLE } from './table/policy-node.js';
import { limitRangeStrategy, priorityClassStrategy, resourceQuotaStrategy } from './strategies/quota.js';
import { LIMITRANGE_TABLE, PRIORITYCLASS_TABLE, RESOURCEQUOTA_TABLE } from './table/quota.js';
import { ingressClassStrategy, ingressStrategy, networkPolicyStrategy } from './strategies/networking.js';
import { INGRESSCLASS_TABLE, INGRESS_TABLE, NETWORKPOLICY_TABLE } from './table/networking.js';
import { podTemplateStrategy, replicationControllerStrategy } from './strategies/replication.js';
import { PODTEMPLATE_TABLE, REPLICATIONCONTROLLER_TABLE } from './table/replication.js';
import { EVENTS_V1_CODEC, EVENTS_V1_TABLE, eventsV1Strategy } from './strategies/events.js';
import { HORIZONTALPODAUTOSCALER_V1_TABLE, HPA_V1_CODEC, horizontalPodAutoscalerStrategy, horizontalPodAutoscalerV1Strategy } from './strategies/autoscaling.js';
import { HORIZONTALPODAUTOSCALER_TABLE } from './table/autoscaling.js';
import { clusterRoleBindingStrategy, clusterRoleStrategy, roleBindingStrategy, roleStrategy } from './strategies/rbac.js';
import {
  CONFIGMAP_TABLE,
  DEPLOYMENT_TABLE,
  ENDPOINTSLICE_TABLE,
  ENDPOINTS_TABLE,
  EVENT_TABLE,
  LEASE_TABLE,
  NAMESPACE_TABLE,
  REPLICASET_TABLE,
  SECRET_TABLE,
  SERVICEACCOUNT_TABLE,
  SERVICE_TABLE,
} from './table/others.js';

const STATUS: SubresourceDef = { name: 'status', verbs: ['get', 'patch', 'update'] };
/** pods, services and nodes `proxy` (handlers/proxy.ts): every verb a proxied method maps to; `kind` is the CONNECT options kind. */
const proxyOf = (kind: string): SubresourceDef => ({ name: 'proxy', kind: { group: '', version: 'v1', kind }, verbs: ['create', 'delete', 'get', 'patch', 'update'] });
const SCALE: SubresourceDef = { name: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] };

export const RESOURCE_DEFS: readonly ResourceDef[] = [
  {
    group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', singular: 'namespace', namespaced: false, returnDeletedObject: true,
    shortNames: ['ns'], statusSubresource: true, subresources: [STATUS, { name: 'finalize', verbs: ['update'] }],
    selectableFields: ['status.phase'], table: NAMESPACE_TABLE, strategy: namespaceStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Node', plural: 'nodes', singular: 'node', namespaced: false, storagePrefix: 'minions',
    shortNames: ['no'], statusSubresource: true, subresources: [STATUS, proxyOf('NodeProxyOptions')], selectableFields: ['spec.unschedulable'],
    table: NODE_TABLE, strategy: nodeStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', namespaced: true, shortNames: ['po'], returnDeletedObject: true,
    categories: ['all'], statusSubresource: true,
    subresources: [
      STATUS,
      { name: 'binding', kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
      { name: 'eviction', kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
      { name: 'log', verbs: ['get'] },
      { name: 'exec', kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, verbs: ['create', 'get'] },
      { name: 'attach', kind: { group: '', version: 'v1', kind: 'PodAttachOptions' }, verbs: ['create', 'get'] },
      { name: 'portforward', kind: { group: '', version: 'v1', kind: 'PodPortForwardOptions' }, verbs: ['create', 'get'] },
      { name: 'ephemeralcontainers', verbs: ['get', 'patch', 'update'] },
      { name: 'resize', verbs: ['get', 'patch', 'update'] },
      proxyOf('PodProxyOptions'),
    ],
    selectableFields: [
      'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork',
      'status.phase', 'status.podIP', 'status.nominatedNodeName',
    ],
    table: POD_TABLE, strategy: podStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Event', plural: 'events', singular: 'event', namespaced: true, shortNames: ['ev'],
    statusSubresource: false, subresources: [],
    selectableFields: [
      'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
      'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath',
      'reason', 'reportingComponent', 'source', 'type',
    ],
    table: EVENT_TABLE, strategy: plainStrategy,
  },
  {
    group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', namespaced: true,
    shortNames: ['cm'], statusSubresource: false, subresources: [], table: CONFIGMAP_TABLE, strategy: configMapStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Secret', plural: 'secrets', singular: 'secret', namespaced: true,
    statusSubresource: false, subresources: [], selectableFields: ['type'], table: SECRET_TABLE, strategy: secretStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Service', plural: 'services', singular: 'service', namespaced: true, returnDeletedObject: true,
    storagePrefix: 'services/specs', shortNames: ['svc'], categories: ['all'], statusSubresource: true,
    subresources: [STATUS, proxyOf('ServiceProxyOptions')], table: SERVICE_TABLE, strategy: serviceStrategy,
  },
  {
    group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', singular: 'endpoints', namespaced: true,
    storagePrefix: 'services/endpoints', shortNames: ['ep'], statusSubresource: false, subresources: [],
    table: ENDPOINTS_TABLE, strategy: plainStrategy,
  },
  {
    group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', singular: 'serviceaccount', returnDeletedObject: true,
    namespaced: true, shortNames: ['sa'], statusSubresource: false,
    subresources: [{ name: 'token', kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] }], table: SERVICEACCOUNT_TABLE,
    strategy: plainStrategy,
  },
  {
    group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', returnDeletedObject: true,
    namespaced: true, shortNames: ['pvc'], statusSubresource: true, subresources: [STATUS], table: PERSISTENTVOLUMECLAIM_TABLE,
    strategy: persistentVolumeClaimStrategy,
  },
  {
    group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', singular: 'persistentvolume', namespaced: false, returnDeletedObject: true,
    shortNames: ['pv'], statusSubresource: true, subresources: [STATUS], table: PERSISTENTVOLUME_TABLE, strategy: persistentVolumeStrategy,
  },
  {
    group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', singular: 'lease', namespaced: true,
    statusSubresource: false, subresources: [], table: LEASE_TABLE, strategy: plainStrategy,
  },
  {
    group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', singular: 'deployment', namespaced: true,
    shortNames: ['deploy'], categories: ['all'], statusSubresource: true, subresources: [STATUS, SCALE],
    table: DEPLOYMENT_TABLE, strategy: deploymentStrategy,
  },
  {
    group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', singular: 'replicaset', namespaced: true,
    shortNames: ['rs'], categories: ['all'], statusSubresource: true, subresources: [STATUS, SCALE],
    selectableFields: ['status.replicas'], table: REPLICASET_TABLE, strategy: replicaSetStrategy,
  },
  {
    group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', singular: 'daemonset', namespaced: true,
    shortNames: ['ds'], categories: ['all'], statusSubresource: true, subresources: [STATUS], table: DAEMONSET_TABLE, strategy: daemonSetStrategy,
  },
  {
    group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', singular: 'statefulset', namespaced: true,
    shortNames: ['sts'], categories: ['all'], statusSubresource: true, subresources: [STATUS, SCALE], table: STATEFULSET_TABLE,
    strategy: statefulSetStrategy,
  },
  {
    group: 'apps', version: 'v1', kind: 'ControllerRevision', plural: 'controllerrevisions', singular: 'controllerrevision',
    namespaced: true, statusSubresource: false, subresources: [], table: CONTROLLERREVISION_TABLE, strategy: controllerRevisionStrategy,
  },
  {
    group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', singular: 'job', namespaced: true, categories: ['all'],
    statusSubresource: true, subresources: [STATUS], table: JOB_TABLE, strategy: jobStrategy,
  },
  {
    group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', singular: 'cronjob', namespaced: true, shortNames: ['cj'],
    categories: ['all'], statusSubresource: true, subresources: [STATUS], table: CRONJOB_TABLE, strategy: cronJobStrategy,
  },
  {
    group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass', plural: 'storageclasses', singular: 'storageclass', returnDeletedObject: true,
    namespaced: false, shortNames: ['sc'], statusSubresource: false, subresources: [], table: STORAGECLASS_TABLE, strategy: storageClassStrategy,
  },
  {
    group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', singular: 'poddisruptionbudget',
    namespaced: true, shortNames: ['pdb'], statusSubresource: true, subresources: [STATUS], table: PODDISRUPTIONBUDGET_TABLE,
    strategy: podDisruptionBudgetStrategy,
  },
  {
    group: 'node.k8s.io', version: 'v1', kind: 'RuntimeClass', plural: 'runtimeclasses', singular: 'runtimeclass', namespaced: false,
    statusSubresource: false, subresources: [], table: RUNTIMECLASS_TABLE, strategy: runtimeClassStrategy,
  },
  {
    group: '', version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', singular: 'resourcequota', namespaced: true,
    shortNames: ['quota'], statusSubresource: true, subresources: [STATUS], table: RESOURCEQUOTA_TABLE, strategy: resourceQuotaStrategy,
  },
  {
    group: '', version: 'v1', kind: 'LimitRange', plural: 'limitranges', singular: 'limitrange', namespaced: true,
    shortNames: ['limits'], statusSubresource: false, subresources: [], table: LIMITRANGE_TABLE, strategy: limitRangeStrategy,
  },
  {
    group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass', plural: 'priorityclasses', singular: 'priorityclass', namespaced: false,
    shortNames: ['pc'], statusSubresource: false, subresources: [], table: PRIORITYCLASS_TABLE, strategy: priorityClassStrategy,
  },
  {
    group: '', version: 'v1', kind: 'ReplicationController', plural: 'replicationcontrollers', singular: 'replicationcontroller', namespaced: true,
    shortNames: ['rc'], categories: ['all'], statusSubresource: true, subresources: [STATUS, SCALE], selectableFields: ['status.replicas'],
    table: REPLICATIONCONTROLLER_TABLE, strategy: replicationControllerStrategy,
  },
  {
    group: '', version: 'v1', kind: 'PodTemplate', plural: 'podtemplates', singular: 'podtemplate', namespaced: true,
    statusSubresource: false, subresources: [], table: PODTEMPLATE_TABLE, strategy: podTemplateStrategy,
  },
  {
    // One storage with core v1 Events (the same keys), converted on every read and write.
    group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', singular: 'event', namespaced: true, shortNames: ['ev'],
    storagePrefix: 'events', storageCodec: EVENTS_V1_CODEC, statusSubresource: false, subresources: [], table: EVENTS_V1_TABLE, strategy: eventsV1Strategy,
  },
  {
    group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', singular: 'ingress', namespaced: true,
    shortNames: ['ing'], statusSubresource: true, subresources: [STATUS], table: INGRESS_TABLE, strategy: ingressStrategy,
  },
  {
    group: 'networking.k8s.io', version: 'v1', kind: 'IngressClass', plural: 'ingressclasses', singular: 'ingressclass', namespaced: false,
    statusSubresource: false, subresources: [], table: INGRESSCLASS_TABLE, strategy: ingressClassStrategy,
  },
  {
    group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', singular: 'networkpolicy', namespaced: true,
    shortNames: ['netpol'], statusSubresource: false, subresources: [], table: NETWORKPOLICY_TABLE, strategy: networkPolicyStrategy,
  },
  {
    group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler',
    namespaced: true, shortNames: ['hpa'], categories: ['all'], statusSubresource: true, subresources: [STATUS], table: HORIZONTALPODAUTOSCALER_TABLE,
    strategy: horizontalPodAutoscalerStrategy,
  },
  {
    // One storage with autoscaling/v2 (listed first, so v2 is the preferred version), converted on every read and write.
    group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler',
    namespaced: true, shortNames: ['hpa'], categories: ['all'], storagePrefix: 'horizontalpodautoscalers', storageCodec: HPA_V1_CODEC,
    statusSubresource: true, subresources: [STATUS], table: HORIZONTALPODAUTOSCALER_V1_TABLE, strategy: horizontalPodAutoscalerV1Strategy,
  },
  {
    group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview', namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'],
    ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectRulesReview', plural: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview', namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'],
    ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews',
    singular: 'subjectaccessreview', namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'],
    ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'authorization.k8s.io', version: 'v1', kind: 'LocalSubjectAccessReview', plural: 'localsubjectaccessreviews',
    singular: 'localsubjectaccessreview', namespaced: true, statusSubresource: false, subresources: [], verbs: ['create'],
    ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'authentication.k8s.io', version: 'v1', kind: 'TokenReview', plural: 'tokenreviews', singular: 'tokenreview',
    namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'], ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', singular: 'selfsubjectreview',
    namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'], ephemeral: true, strategy: plainStrategy,
  },
  {
    group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', singular: 'clusterrole',
    namespaced: false, statusSubresource: false, subresources: [], nameValidation: 'pathSegment', table: ROLE_TABLE,
    strategy: clusterRoleStrategy,
  },
  {
    group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings',
    singular: 'clusterrolebinding', namespaced: false, statusSubresource: false, subresources: [], nameValidation: 'pathSegment',
    table: ROLEBINDING_TABLE, strategy: clusterRoleBindingStrategy,
  },
  {
    group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', singular: 'role', namespaced: true,
    statusSubresource: false, subresources: [], nameValidation: 'pathSegment', table: ROLE_TABLE, strategy: roleStrategy,
  },
  {
    group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', singular: 'rolebinding',
    namespaced: true, statusSubresource: false, subresources: [], nameValidation: 'pathSegment', table: ROLEBINDING_TABLE,
    strategy: roleBindingStrategy,
  },
  {
    group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests',
    singular: 'certificatesigningrequest', namespaced: false, shortNames: ['csr'], statusSubresource: true,
    subresources: [STATUS, { name: 'approval', verbs: ['get', 'patch', 'update'] }], table: CSR_TABLE,
    strategy: certificateSigningRequestStrategy,
  },
  {
    // nodelet's credential exchange for `nodelet join` and credential rotation (auth/node-credentials.ts).
    group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential',
    namespaced: false, statusSubresource: false, subresources: [], verbs: ['create'], ephemeral: true, strategy: plainStrategy,
  },
  {
    // Custom resources (apiextensions/): the versions of each Established CRD join the catalog (catalog.ts).
    group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions',
    singular: 'customresourcedefinition', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'],
    statusSubresource: true, subresources: [STATUS], table: CRD_TABLE, strategy: crdStrategy,
  },
  {
    group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices', singular: 'endpointslice',
    namespaced: true, statusSubresource: false, subresources: [], table: ENDPOINTSLICE_TABLE, strategy: plainStrategy,
  },
  {
    group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations',
    singular: 'mutatingwebhookconfiguration', namespaced: false, categories: ['api-extensions'], statusSubresource: false, subresources: [],
    table: WEBHOOK_CONFIGURATION_TABLE, strategy: mutatingWebhookConfigurationStrategy,
  },
  {
    group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations',
    singular: 'validatingwebhookconfiguration', namespaced: false, categories: ['api-extensions'], statusSubresource: false, subresources: [],
    table: WEBHOOK_CONFIGURATION_TABLE, strategy: validatingWebhookConfigurationStrategy,
  },
];

/** Group → versions → resources, in the order discovery lists them (core first). */
export function groupVersions(defs: readonly ResourceDef[] = RESOURCE_DEFS): Array<{ group: string; version: string; resources: ResourceDef[] }> {
  const out: Array<{ group: string; version: string; resources: ResourceDef[] }> = [];
  for (const d of defs) {
    let gv = out.find((g) => g.group === d.group && g.version === d.version);
    if (!gv) out.push((gv = { group: d.group, version: d.version, resources: [] }));
    gv.resources.push(d);
  }
  return out;
}

export function findResource(group: string, version: string, plural: string): ResourceDef | undefined {
  return RESOURCE_DEFS.find((d) => d.group === group && d.version === version && d.plural === plural);
}

export function findResourceByKind(apiVersion: string, kind: string): ResourceDef | undefined {
  return RESOURCE_DEFS.find((d) => (d.group ? `${d.group}/${d.version}` : d.version) === apiVersion && d.kind === kind);
}
