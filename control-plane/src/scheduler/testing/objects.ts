// Small builders of Node and Pod objects for scheduler and controller tests.
import type { ContainerImage, Container, Node, Pod, PodSpec, Taint } from '@nodelet/api';

export function makeNode(
  name: string,
  opts: { cpu?: string; memory?: string; pods?: string; ephemeral?: string; labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean; images?: ContainerImage[] } = {},
): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid: `uid-${name}`, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: { taints: opts.taints, unschedulable: opts.unschedulable },
    status: {
      allocatable: {
        cpu: opts.cpu ?? '4',
        memory: opts.memory ?? '8Gi',
        pods: opts.pods ?? '110',
        'ephemeral-storage': opts.ephemeral ?? '100Gi',
      },
      conditions: [{ type: 'Ready', status: 'True' }],
      ...(opts.images ? { images: opts.images } : {}),
    },
  };
}

export function makePod(
  name: string,
  opts: { cpu?: string; memory?: string; node?: string; owner?: string; namespace?: string; labels?: Record<string, string>; spec?: Partial<PodSpec>; containers?: Container[] } = {},
): Pod {
  const requests: Record<string, string> = {};
  if (opts.cpu) requests['cpu'] = opts.cpu;
  if (opts.memory) requests['memory'] = opts.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      ...(opts.labels ? { labels: opts.labels } : {}),
      uid: `uid-${name}`,
      ownerReferences: opts.owner ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: opts.owner, uid: `uid-${opts.owner}`, controller: true }] : undefined,
    },
    spec: {
      containers: opts.containers ?? [{ name: 'main', image: 'busybox', resources: Object.keys(requests).length ? { requests } : undefined }],
      nodeName: opts.node,
      schedulerName: 'default-scheduler',
      ...(opts.spec ?? {}),
    },
    status: { phase: 'Pending' },
  };
}
