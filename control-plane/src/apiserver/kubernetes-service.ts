/**
 * The `default/kubernetes` Service, which pods use to reach the API server (kube-apiserver's
 * "kubernetes service" controller and endpoint reconciler):
 *
 *   Service        ClusterIP = the first address of the service CIDR (10.96.0.1), port 443 "https"
 *                  → targetPort = the API server's port, no selector
 *   Endpoints      the server's advertise address and port
 *   EndpointSlice  kubernetes (label kubernetes.io/service-name=kubernetes), the same address
 *
 * Reconciled at start and every `intervalMs` (10 s, as upstream), so an edited or deleted object
 * comes back. With several servers each writes its own address — nodelet runs one per store.
 */
import { delay, describeError, isAbortError, type Logger } from '@nodelet/base';
import type { ServedResource, ServerContext } from './context.js';
import { admitCreate, admitUpdate } from './handlers/admit.js';
import { jsonEqual, type ApiObject, type Json } from './object.js';
import { StatusError } from './status.js';

export interface KubernetesServiceOptions {
  /** Address pods connect to (the server's advertise address). */
  advertiseAddress: string;
  port: number;
  /** The Service's ClusterIP: the first usable address of the service CIDR. */
  serviceIp: string;
  intervalMs?: number;
  log: Logger;
}

async function upsert(ctx: ServerContext, served: ServedResource, want: ApiObject, same: (cur: ApiObject) => boolean): Promise<void> {
  const ns = want.metadata.namespace;
  const name = want.metadata.name!;
  const cur = await served.registry.find(ns, name);
  if (!cur) {
    try {
      await served.registry.create(admitCreate(ctx, served.def, structuredClone(want)));
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
    return;
  }
  if (same(cur)) return;
  await served.registry.guaranteedUpdate(ns, name, (c) => admitUpdate(served.def, { ...structuredClone(want), metadata: { ...c.metadata, ...want.metadata } }, c));
}

export async function reconcileKubernetesService(ctx: ServerContext, o: KubernetesServiceOptions): Promise<void> {
  const svcPorts = [{ name: 'https', protocol: 'TCP', port: 443, targetPort: o.port }];
  const service: ApiObject = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: o.serviceIp, clusterIPs: [o.serviceIp], ports: svcPorts, sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' },
  };
  await upsert(ctx, ctx.resource('', 'v1', 'services')!, service, (cur) => {
    const spec = (cur.spec ?? {}) as Json;
    return spec.clusterIP === o.serviceIp && jsonEqual(((spec.ports ?? []) as Json[]).map((p) => [p.port, p.targetPort, p.protocol]), [[443, o.port, 'TCP']]);
  });
  const subsets = [{ addresses: [{ ip: o.advertiseAddress }], ports: [{ name: 'https', port: o.port, protocol: 'TCP' }] }];
  await upsert(ctx, ctx.resource('', 'v1', 'endpoints')!, {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }, subsets,
  }, (cur) => jsonEqual(cur.subsets, subsets));
  const endpoints = [{ addresses: [o.advertiseAddress], conditions: { ready: true } }];
  const ports = [{ name: 'https', port: o.port, protocol: 'TCP' }];
  await upsert(ctx, ctx.resource('discovery.k8s.io', 'v1', 'endpointslices')!, {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
    addressType: 'IPv4', endpoints, ports,
  }, (cur) => jsonEqual(cur.endpoints, endpoints) && jsonEqual(cur.ports, ports));
}

/** Reconciles now, then every `intervalMs` until `signal` aborts; failures are logged and retried. */
export async function keepKubernetesService(ctx: ServerContext, o: KubernetesServiceOptions, signal: AbortSignal): Promise<void> {
  for (;;) {
    try {
      await reconcileKubernetesService(ctx, o);
    } catch (err) {
      if (!signal.aborted) o.log.warn({ err: describeError(err) }, 'Could not reconcile the kubernetes Service');
    }
    try {
      await delay(o.intervalMs ?? 10_000, signal);
    } catch (err) {
      if (isAbortError(err)) return;
      throw err;
    }
  }
}
