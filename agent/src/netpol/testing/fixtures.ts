/** Pods, Namespaces and NetworkPolicies for the NetworkPolicy tests. */
import type { ContainerPort, Namespace, NetworkPolicy, Pod } from '@nodelet/api';

let uid = 0;

/** A running pod with one container (its `ports`), on `node`, with `ip`. */
export function pod(name: string, ns: string, labels: Record<string, string>, ip: string, node = 'n1', ports: ContainerPort[] = []): Pod {
  return {
    metadata: { name, namespace: ns, labels, uid: `uid-${name}-${++uid}` },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'x', ports }] },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): Namespace {
  return { metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } };
}

export function policy(name: string, ns: string, spec: NetworkPolicy['spec']): NetworkPolicy {
  return { metadata: { name, namespace: ns }, spec };
}
