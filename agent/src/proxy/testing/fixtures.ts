/** Service and EndpointSlice builders for the proxy's tests and bench. */
import type { EndpointSlice, Service, ServiceSpec } from '@nodelet/api';

export interface EpSpec {
  ip: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export function service(name: string, clusterIP: string, spec: Partial<ServiceSpec> = {}, namespace = 'default'): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], ...spec },
  };
}

export function slice(svc: string, eps: EpSpec[], ports: EndpointSlice['ports'] = [{ port: 8080, protocol: 'TCP' }], namespace = 'default', name = `${svc}-abcde`): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports,
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false },
      ...(e.node ? { nodeName: e.node } : {}),
    })),
  };
}
