/** Schemas of apps/v1 workloads (Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision) and autoscaling/v1 Scale. */
import { bool, definitions, int32, int64, kind, listOf, obj, ref, str, type JsonSchema } from './dsl.js';

const condition = (of: string): JsonSchema =>
  obj(`A condition of a ${of}.`, {
    type: str('Type of condition.'),
    status: str('`True`, `False` or `Unknown`.'),
    lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
    reason: str('Brief reason, in CamelCase.'),
    message: str('Details.'),
  }, { required: ['type', 'status'] });
const conditions = (short: string, of: string): JsonSchema => listOf(short, `Observations of the ${of}’s state.`, { type: 'map', keys: ['type'], merge: 'type' });
const selector = ref('meta.LabelSelector', 'Pods the controller owns; must match the template’s labels and cannot change.');
const template = ref('core.PodTemplateSpec', 'The pods to create.');
const minReadySeconds = int32('Seconds a new pod must be ready before it counts as available (default 0).');
const historyLimit = int32('Old revisions kept for rollback (default 10).');
const observedGeneration = int64('The generation the controller last acted on.');
const collisionCount = int32('Bumped when a revision name collides, to make the next name unique.');

export const APPS_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('apps', {
    Deployment: kind('apps/v1:Deployment', 'Declarative updates for a set of identical pods, through ReplicaSets.', {
      spec: ref('apps.DeploymentSpec', 'The desired state.'),
      status: ref('apps.DeploymentStatus', 'The observed state. Read-only.'),
    }),
    DeploymentSpec: obj('The desired state of a Deployment.', {
      replicas: int32('Number of pods (default 1).'),
      selector,
      template,
      strategy: { ...ref('apps.DeploymentStrategy', 'How old pods are replaced by new ones.'), 'x-kubernetes-patch-strategy': 'retainKeys' },
      minReadySeconds,
      revisionHistoryLimit: historyLimit,
      paused: bool('Stop rolling out changes of the template.'),
      progressDeadlineSeconds: int32('Seconds without progress before the rollout is reported as failed (default 600).'),
    }, { required: ['selector', 'template'] }),
    DeploymentStrategy: obj('How a Deployment replaces pods.', {
      type: str('`RollingUpdate` (default): replace gradually; `Recreate`: remove all old pods first.', { enum: ['Recreate', 'RollingUpdate'] }),
      rollingUpdate: ref('apps.RollingUpdateDeployment', 'Pace of a rolling update; only with type RollingUpdate.'),
    }),
    RollingUpdateDeployment: obj('The pace of a rolling update.', {
      maxUnavailable: ref('intstr.IntOrString', 'Pods that may be unavailable during the update, as a number or a percentage rounded down (default 25%).'),
      maxSurge: ref('intstr.IntOrString', 'Pods that may exist above the desired count, as a number or a percentage rounded up (default 25%).'),
    }),
    DeploymentStatus: obj('The observed state of a Deployment.', {
      observedGeneration,
      replicas: int32('Pods of the Deployment, any version.'),
      updatedReplicas: int32('Pods of the current template.'),
      readyReplicas: int32('Ready pods.'),
      availableReplicas: int32('Pods ready for at least minReadySeconds.'),
      unavailableReplicas: int32('Pods still needed for full availability.'),
      conditions: conditions('apps.DeploymentCondition', 'Deployment'),
      collisionCount,
    }),
    DeploymentCondition: obj('A condition of a Deployment (Available, Progressing, ReplicaFailure).', {
      type: str('Type of condition.'),
      status: str('`True`, `False` or `Unknown`.'),
      lastUpdateTime: ref('meta.Time', 'When the condition was last updated.'),
      lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
      reason: str('Brief reason.'),
      message: str('Details.'),
    }, { required: ['type', 'status'] }),
    ReplicaSet: kind('apps/v1:ReplicaSet', 'Keeps a number of identical pods running.', {
      spec: ref('apps.ReplicaSetSpec', 'The desired state.'),
      status: ref('apps.ReplicaSetStatus', 'The observed state. Read-only.'),
    }),
    ReplicaSetSpec: obj('The desired state of a ReplicaSet.', {
      replicas: int32('Number of pods (default 1).'),
      minReadySeconds,
      selector,
      template,
    }, { required: ['selector'] }),
    ReplicaSetStatus: obj('The observed state of a ReplicaSet.', {
      replicas: int32('Pods the ReplicaSet has.'),
      fullyLabeledReplicas: int32('Pods whose labels match the template’s.'),
      readyReplicas: int32('Ready pods.'),
      availableReplicas: int32('Pods ready for at least minReadySeconds.'),
      observedGeneration,
      conditions: conditions('apps.ReplicaSetCondition', 'ReplicaSet'),
    }, { required: ['replicas'] }),
    ReplicaSetCondition: condition('ReplicaSet'),
    DaemonSet: kind('apps/v1:DaemonSet', 'Runs one pod on every eligible node.', {
      spec: ref('apps.DaemonSetSpec', 'The desired state.'),
      status: ref('apps.DaemonSetStatus', 'The observed state. Read-only.'),
    }),
    DaemonSetSpec: obj('The desired state of a DaemonSet.', {
      selector,
      template: ref('core.PodTemplateSpec', 'The pod to run on each node; restartPolicy must be Always.'),
      updateStrategy: ref('apps.DaemonSetUpdateStrategy', 'How pods are replaced when the template changes.'),
      minReadySeconds,
      revisionHistoryLimit: historyLimit,
    }, { required: ['selector', 'template'] }),
    DaemonSetUpdateStrategy: obj('How a DaemonSet replaces pods.', {
      type: str('`RollingUpdate` (default) or `OnDelete` (only when a pod is deleted).', { enum: ['OnDelete', 'RollingUpdate'] }),
      rollingUpdate: ref('apps.RollingUpdateDaemonSet', 'Pace of a rolling update.'),
    }),
    RollingUpdateDaemonSet: obj('The pace of a DaemonSet rolling update.', {
      maxUnavailable: ref('intstr.IntOrString', 'Nodes that may lack an available pod during the update (default 1).'),
      maxSurge: ref('intstr.IntOrString', 'Nodes that may run an old and a new pod at once (default 0).'),
    }),
    DaemonSetStatus: obj('The observed state of a DaemonSet.', {
      currentNumberScheduled: int32('Nodes running a pod that should.'),
      numberMisscheduled: int32('Nodes running a pod that should not.'),
      desiredNumberScheduled: int32('Nodes that should run a pod.'),
      numberReady: int32('Nodes with a ready pod.'),
      observedGeneration,
      updatedNumberScheduled: int32('Nodes running a pod of the current template.'),
      numberAvailable: int32('Nodes with an available pod.'),
      numberUnavailable: int32('Nodes that should run an available pod and do not.'),
      collisionCount,
      conditions: conditions('apps.DaemonSetCondition', 'DaemonSet'),
    }, { required: ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'] }),
    DaemonSetCondition: condition('DaemonSet'),
    StatefulSet: kind('apps/v1:StatefulSet', 'Pods with stable names, network identities and storage, created and updated in order.', {
      spec: ref('apps.StatefulSetSpec', 'The desired state.'),
      status: ref('apps.StatefulSetStatus', 'The observed state. Read-only.'),
    }),
    StatefulSetSpec: obj('The desired state of a StatefulSet.', {
      replicas: int32('Number of pods (default 1).'),
      selector,
      template,
      volumeClaimTemplates: listOf('core.PersistentVolumeClaim', 'Claims each pod gets, named `<template>-<set>-<ordinal>`.', { type: 'atomic' }),
      serviceName: str('Headless Service that gives the pods their DNS names.'),
      podManagementPolicy: str('`OrderedReady` (default): one pod at a time, in order; `Parallel`: all at once.', { enum: ['OrderedReady', 'Parallel'] }),
      updateStrategy: ref('apps.StatefulSetUpdateStrategy', 'How pods are replaced when the template changes.'),
      revisionHistoryLimit: historyLimit,
      minReadySeconds,
      persistentVolumeClaimRetentionPolicy: ref('apps.StatefulSetPersistentVolumeClaimRetentionPolicy', 'What happens to the claims when the set is deleted or scaled down.'),
      ordinals: ref('apps.StatefulSetOrdinals', 'Numbering of the pods.'),
    }, { required: ['selector', 'template'] }),
    StatefulSetUpdateStrategy: obj('How a StatefulSet replaces pods.', {
      type: str('`RollingUpdate` (default) or `OnDelete`.', { enum: ['OnDelete', 'RollingUpdate'] }),
      rollingUpdate: ref('apps.RollingUpdateStatefulSetStrategy', 'Settings of a rolling update.'),
    }),
    RollingUpdateStatefulSetStrategy: obj('Settings of a StatefulSet rolling update.', {
      partition: int32('Only ordinals at or above this are updated.'),
      maxUnavailable: ref('intstr.IntOrString', 'Pods that may be unavailable during the update (default 1).'),
    }),
    StatefulSetPersistentVolumeClaimRetentionPolicy: obj('Whether a StatefulSet’s claims are kept.', {
      whenDeleted: str('`Retain` (default) or `Delete` when the set is deleted.'),
      whenScaled: str('`Retain` (default) or `Delete` when pods are removed by scaling down.'),
    }),
    StatefulSetOrdinals: obj('Numbering of a StatefulSet’s pods.', { start: int32('Ordinal of the first pod (default 0).') }),
    StatefulSetStatus: obj('The observed state of a StatefulSet.', {
      observedGeneration,
      replicas: int32('Pods of the set.'),
      readyReplicas: int32('Ready pods.'),
      currentReplicas: int32('Pods at currentRevision.'),
      updatedReplicas: int32('Pods at updateRevision.'),
      currentRevision: str('Revision of the pods before the update.'),
      updateRevision: str('Revision the pods are updated to.'),
      collisionCount,
      conditions: conditions('apps.StatefulSetCondition', 'StatefulSet'),
      availableReplicas: int32('Pods ready for at least minReadySeconds.'),
    }, { required: ['replicas'] }),
    StatefulSetCondition: condition('StatefulSet'),
    ControllerRevision: kind('apps/v1:ControllerRevision', 'An immutable snapshot of a DaemonSet’s or StatefulSet’s pod template, for rollback.', {
      data: ref('runtime.RawExtension', 'The recorded state (a patch of the template).'),
      revision: int64('Revision number.'),
    }, { required: ['revision'] }),
  }),
  ...definitions('autoscaling', {
    Scale: kind('autoscaling/v1:Scale', 'The scale subresource of a workload.', {
      spec: ref('autoscaling.ScaleSpec', 'The desired replicas.'),
      status: ref('autoscaling.ScaleStatus', 'The current replicas. Read-only.'),
    }),
    ScaleSpec: obj('The desired scale.', { replicas: int32('Desired number of replicas.') }),
    ScaleStatus: obj('The current scale.', {
      replicas: int32('Current number of replicas.'),
      selector: str('Label selector of the pods, in string form.'),
    }, { required: ['replicas'] }),
  }),
};
