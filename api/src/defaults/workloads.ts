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
