/**
 * The `default/kubernetes` Service, which pods use to reach the API server (kube-apiserver's
 * "kubernetes service" controller and endpoint reconciler):
 *
 *   Service        ClusterIP = the first address of the service CIDR (10.96.0.1), port 443 "https"
 *                  → targetPort = the API server's port, no selector
 *   Endpoints      the advertise address of every live server (endpoint-leases.ts), this port
 *   EndpointSlice  kubernetes (label kubernetes.io/service-name=kubernetes), the same addresses
 *
 * Reconciled at start and every `intervalMs` (10 s, as upstream), so an edited or deleted object
 * comes back. With several servers on one store, each renews its endpoint lease and writes the
 * same sorted list, so they agree instead of overwriting each other. All servers must serve on
 * the same port (as kube-apiserver's reconciler requires); one on another port is left out.
 */
import { delay, describeError, isAbortError, type Logger } from '@nodelet/base';
import { liveEndpoints, removeEndpointLease, renewEndpointLease, type ApiServerEndpoint } from './endpoint-leases.js';
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

/**
 * Writes the Service, Endpoints and EndpointSlice for the live servers `live` (default: this one
 * alone). Servers on a port other than `o.port` are left out (with a warning).
 */
export async function reconcileKubernetesService(ctx: ServerContext, o: KubernetesServiceOptions, live: readonly ApiServerEndpoint[] = [{ ip: o.advertiseAddress, port: o.port }]): Promise<void> {
  const others = live.filter((e) => e.port !== o.port);
  if (others.length) o.log.warn({ servers: others, port: o.port }, 'API servers on another port are left out of the kubernetes endpoints');
  const ips = live.filter((e) => e.port === o.port).map((e) => e.ip);
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
  const subsets = [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'https', port: o.port, protocol: 'TCP' }] }];
  await upsert(ctx, ctx.resource('', 'v1', 'endpoints')!, {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }, subsets,
  }, (cur) => jsonEqual(cur.subsets, subsets));
  const endpoints = ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
  const ports = [{ name: 'https', port: o.port, protocol: 'TCP' }];
  await upsert(ctx, ctx.resource('discovery.k8s.io', 'v1', 'endpointslices')!, {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
    addressType: 'IPv4', endpoints, ports,
  }, (cur) => jsonEqual(cur.endpoints, endpoints) && jsonEqual(cur.ports, ports));
}

/**
 * Renews this server's endpoint lease and reconciles, now and every `intervalMs` until `signal`
 * aborts; failures are logged and retried. At the end, a server that is not the last one live
 * removes its lease and its address (kube-apiserver does so at shutdown), so pods stop being sent
 * to it at once; the last one stays listed, so a restarting one-server lab keeps its endpoints.
 */
export async function keepKubernetesService(ctx: ServerContext, o: KubernetesServiceOptions, signal: AbortSignal): Promise<void> {
  const self = { ip: o.advertiseAddress, port: o.port };
  for (;;) {
    try {
      await reconcileKubernetesService(ctx, o, await renewEndpointLease(ctx.store, self, ctx.now(), o.log));
    } catch (err) {
      if (!signal.aborted) o.log.warn({ err: describeError(err) }, 'Could not reconcile the kubernetes Service');
    }
    try {
      await delay(o.intervalMs ?? 10_000, signal);
    } catch (err) {
      if (isAbortError(err)) break;
      throw err;
    }
  }
  try {
    const rest = await liveEndpoints(ctx.store, ctx.now(), o.log, self.ip);
    if (rest.length === 0) return;
    await removeEndpointLease(ctx.store, self.ip);
    await reconcileKubernetesService(ctx, o, rest);
    o.log.info({ ip: self.ip }, 'Removed this server from the kubernetes endpoints');
  } catch (err) {
    o.log.warn({ err: describeError(err) }, 'Could not remove this server from the kubernetes endpoints; its lease expires');
  }
}
