/**
 * The objects the soak creates, all in one namespace and labelled with their kind, so the oracles
 * know what each pod should look like when converged:
 *
 *   kind      containers                               converged
 *   steady    one, sleeps (web, burst deployments)     Ready, one running container
 *   probed    httpd behind readiness+liveness httpGet   Ready, one running container
 *   crashy    exits 1 after 3 s (CrashLoopBackOff)      a ready sandbox; restarts are its own
 *   init      two init containers, then one app         Ready, inits exited 0, app running
 *   hostport  httpd on a hostPort                       Ready, one running container
 *   badimage  an image the registry does not have       a ready sandbox, no container, ImagePullBackOff
 *
 * Every shell traps TERM so deletion takes a moment, not the grace period.
 */
import type { ConfigMap, Container, Deployment, Namespace, Pod, PodSpec, Service } from '@nodelet/api';
import type { DeploymentName, PodKind } from './plan.js';

export const SOAK_NAMESPACE = 'nodelet-soak';
export const KIND_LABEL = 'soak.nodelet.io/kind';

export type WorkloadKind = 'steady' | 'probed' | 'crashy' | PodKind;

/** Kinds whose containers restart on their own (not evidence of a fault's side effect). */
export const RESTARTS_BY_DESIGN: ReadonlySet<WorkloadKind> = new Set(['crashy']);

const SLEEP = "trap 'exit 0' TERM; sleep 1000000 & wait";
const HTTPD = "trap 'exit 0' TERM; mkdir -p /www && echo ok > /www/index.html && httpd -f -p 8080 -h /www & wait";

export function namespace(): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SOAK_NAMESPACE } };
}

function container(name: string, image: string, script: string): Container {
  return { name, image, command: ['sh', '-c', script], imagePullPolicy: 'IfNotPresent' };
}

function spec(kind: WorkloadKind, busybox: string, registry: string, hostPort?: number): PodSpec {
  const base = { terminationGracePeriodSeconds: 5, enableServiceLinks: false };
  switch (kind) {
    case 'steady':
      return { ...base, containers: [container('main', busybox, SLEEP)] };
    case 'probed': {
      const c = container('main', busybox, HTTPD);
      c.ports = [{ containerPort: 8080, name: 'http' }];
      c.readinessProbe = { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 };
      c.livenessProbe = { httpGet: { path: '/', port: 8080 }, periodSeconds: 10, failureThreshold: 3 };
      return { ...base, containers: [c] };
    }
    case 'crashy':
      return { ...base, containers: [container('main', busybox, 'sleep 3; exit 1')] };
    case 'init':
      return {
        ...base,
        volumes: [{ name: 'work', emptyDir: {} }],
        initContainers: [
          container('first', busybox, 'true'),
          { ...container('second', busybox, 'echo done > /work/done'), volumeMounts: [{ name: 'work', mountPath: '/work' }] },
        ],
        containers: [{ ...container('main', busybox, `test -f /work/done && ${SLEEP}`), volumeMounts: [{ name: 'work', mountPath: '/work' }] }],
      };
    case 'hostport': {
      const c = container('main', busybox, HTTPD);
      c.ports = [{ containerPort: 8080, hostPort, protocol: 'TCP' }];
      return { ...base, containers: [c] };
    }
    case 'badimage':
      return { ...base, containers: [container('main', `${registry}/soak-does-not-exist:v1`, SLEEP)] };
  }
}

/** What kind of pods each deployment runs. */
export const DEPLOYMENT_KIND: Readonly<Record<DeploymentName, WorkloadKind>> = { web: 'steady', burst: 'steady', probed: 'probed', crashy: 'crashy' };

export function deployment(name: DeploymentName, replicas: number, busybox: string, registry: string): Deployment {
  const kind = DEPLOYMENT_KIND[name];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: SOAK_NAMESPACE },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, [KIND_LABEL]: kind } }, spec: spec(kind, busybox, registry) },
    },
  };
}

export function pod(name: string, kind: PodKind, busybox: string, registry: string, hostPort?: number): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: SOAK_NAMESPACE, labels: { [KIND_LABEL]: kind } }, spec: spec(kind, busybox, registry, hostPort) };
}

export function service(name: string, target: DeploymentName): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: SOAK_NAMESPACE },
    spec: { selector: { app: target }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

/** The ledger's objects: one ConfigMap per sequence of writes, its last acknowledged value in `seq`. */
export function ledgerConfigMap(name: string, seq: number): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: SOAK_NAMESPACE, labels: { [KIND_LABEL]: 'ledger' } }, data: { seq: String(seq) } };
}
