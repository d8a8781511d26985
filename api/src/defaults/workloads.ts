/** Defaults of apps/v1 Deployment/ReplicaSet and core/v1 Service (k8s.io/kubernetes/pkg/apis/*\/v1/defaults.go). */
import { defaultPodSpec } from './pod.js';

type Obj = Record<string, unknown>;

export function defaultDeploymentSpec(spec: Obj): void {
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  const strategy = (spec.strategy ??= {}) as Obj;
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {}) as Obj;
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  defaultTemplate(spec);
}

export function defaultReplicaSetSpec(spec: Obj): void {
  spec.replicas ??= 1;
  defaultTemplate(spec);
}

function defaultTemplate(spec: Obj): void {
  const template = spec.template as Obj | undefined;
  if (template?.spec && typeof template.spec === 'object') defaultPodSpec(template.spec as Obj);
}

export function defaultServiceSpec(spec: Obj): void {
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (spec.sessionAffinity === 'ClientIP') {
    const cfg = (spec.sessionAffinityConfig ??= {}) as Obj;
    const clientIP = (cfg.clientIP ??= {}) as Obj;
    clientIP.timeoutSeconds ??= 10800;
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.ipFamilies ??= ['IPv4'];
  }
  if (Array.isArray(spec.ports)) {
    for (const p of spec.ports as Obj[]) {
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
    }
  }
}

/** apps/v1 SetDefaults_DaemonSet. */
export function defaultDaemonSetSpec(spec: Obj): void {
  const strategy = (spec.updateStrategy ??= {}) as Obj;
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate ??= {}) as Obj;
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  defaultTemplate(spec);
}

/** apps/v1 SetDefaults_StatefulSet (StatefulSetAutoDeletePVC on, MaxUnavailableStatefulSet off, as in 1.32). */
export function defaultStatefulSetSpec(spec: Obj): void {
  spec.podManagementPolicy ??= 'OrderedReady';
  const strategy = (spec.updateStrategy ??= {}) as Obj;
  if (strategy.type === undefined) {
    strategy.type = 'RollingUpdate';
    strategy.rollingUpdate ??= {};
  }
  if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate && typeof strategy.rollingUpdate === 'object') {
    (strategy.rollingUpdate as Obj).partition ??= 0;
  }
  const retention = (spec.persistentVolumeClaimRetentionPolicy ??= {}) as Obj;
  retention.whenDeleted ??= 'Retain';
  retention.whenScaled ??= 'Retain';
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  if (Array.isArray(spec.volumeClaimTemplates)) {
    for (const t of spec.volumeClaimTemplates as Obj[]) {
      if (!t || typeof t !== 'object') continue;
      t.apiVersion ??= 'v1';
      t.kind ??= 'PersistentVolumeClaim';
      if (t.spec && typeof t.spec === 'object') defaultPersistentVolumeClaimSpec(t.spec as Obj);
      const status = (t.status ??= {}) as Obj;
      status.phase ??= 'Pending';
    }
  }
  defaultTemplate(spec);
}

/** core/v1 SetDefaults_PersistentVolumeClaimSpec. */
export function defaultPersistentVolumeClaimSpec(spec: Obj): void {
  spec.volumeMode ??= 'Filesystem';
}

/** core/v1 SetDefaults_PersistentVolume (the phase is set on create by the strategy). */
export function defaultPersistentVolumeSpec(spec: Obj): void {
  spec.persistentVolumeReclaimPolicy ??= 'Retain';
  spec.volumeMode ??= 'Filesystem';
}
