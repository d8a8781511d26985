/**
 * ClusterIP (and NodePort) allocation for Services (kube-apiserver's service IP allocator, simplified): the
 * lowest free address of the service range not already used by a Service, skipping the network
 * address and .1 (reserved for the `kubernetes` Service). Allocations are serialized in-process,
 * and across API servers on one store by the allocation ledger's CAS (allocation-ledger.ts).
 */
import { formatIpv4, parseIpv4Cidr, Semaphore } from '@nodelet/base';
import type { ServerContext } from '../context.js';
import { MATCH_ALL } from '../filter.js';
import type { ApiObject, Json } from '../object.js';
import { StatusError } from '../status.js';
import { allocateThroughLedger } from './allocation-ledger.js';

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/16';
/** One allocation at a time per API server (the ledger's CAS orders allocations between servers). */
const locks = new WeakMap<ServerContext, Semaphore>();

function parseCidr(cidr: string): { base: number; size: number } {
  const { base, prefix } = parseIpv4Cidr(cidr);
  return { base, size: 2 ** (32 - prefix) };
}

/** NodePort range of kube-apiserver's default --service-node-port-range. */
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

function allocateNodePorts(ports: Json[], existing: ApiObject[], reserved: readonly number[]): void {
  const used = new Set<number>(reserved);
  for (const svc of existing) {
    const spec = svc.spec as Json | undefined;
    for (const p of (spec?.ports ?? []) as Json[]) if (typeof p.nodePort === 'number') used.add(p.nodePort);
    if (typeof spec?.healthCheckNodePort === 'number') used.add(spec.healthCheckNodePort);
  }
  for (const p of ports) if (typeof p.nodePort === 'number' && p.nodePort) used.add(p.nodePort);
  for (const p of ports) {
    if (p.nodePort) continue;
    let port = NODE_PORT_MIN;
    while (used.has(port) && port <= NODE_PORT_MAX) port++;
    if (port > NODE_PORT_MAX) throw new StatusError(500, 'InternalError', 'failed to allocate a nodePort: range 30000-32767 is full');
    p.nodePort = port;
    used.add(port);
  }
}

/** The first usable address of a service CIDR: the `kubernetes` Service's ClusterIP. */
export function firstServiceIp(cidr: string): string {
  return formatIpv4(parseCidr(cidr).base + 1);
}

/**
 * Fills spec.clusterIP(s) of a new ClusterIP/NodePort/LoadBalancer Service, then runs `create`.
 * A dry run picks the same way and reserves nothing.
 */
export async function withClusterIp<T>(ctx: ServerContext, svc: ApiObject, create: () => Promise<T>, cidr = DEFAULT_SERVICE_CIDR, dryRun = false): Promise<T> {
  const spec = (svc.spec ?? {}) as Json;
  const needsIp = !(spec.type === 'ExternalName' || spec.clusterIP === 'None' || (typeof spec.clusterIP === 'string' && spec.clusterIP !== ''));
  const ports = (Array.isArray(spec.ports) ? spec.ports : []) as Json[];
  // A LoadBalancer's nodePorts are optional (allocateLoadBalancerNodePorts: false, for load
  // balancers that reach pods directly); with eTP Local it also gets healthCheckNodePort, which
  // the agents serve (agent/src/proxy/health-check.ts). Both from the one nodePort range, as upstream.
  const wantsNodePorts = spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
  const health: Json[] = spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' ? [{ nodePort: spec.healthCheckNodePort }] : [];
  const allocatable = [...(wantsNodePorts ? ports : []), ...health];
  const needsNodePorts = allocatable.some((p) => !p.nodePort);
  if (!needsIp && !needsNodePorts) {
    if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
    return create();
  }
  let lock = locks.get(ctx);
  if (!lock) locks.set(ctx, (lock = new Semaphore(1)));
  return lock.use(async () => {
    const services = ctx.resource('', 'v1', 'services')!;
    const existing = (await services.registry.list({ filter: MATCH_ALL })).items;
    const givenPorts = allocatable.map((p) => p.nodePort);
    const picked = await allocateThroughLedger(ctx.store, ctx.now(), (reserved) => {
      allocatable.forEach((p, i) => (p.nodePort = givenPorts[i]));
      if (needsNodePorts) allocateNodePorts(allocatable, existing, reserved.nodePorts);
      const nodePorts = allocatable.filter((p, i) => p.nodePort && !givenPorts[i]).map((p) => p.nodePort as number);
      if (!needsIp) return { ips: [], nodePorts };
      const used = new Set([...existing.map((s) => (s.spec as Json | undefined)?.clusterIP), ...reserved.ips]);
      const { base, size } = parseCidr(cidr);
      for (let i = 2; i < size - 1; i++) {
        const ip = formatIpv4(base + i);
        if (!used.has(ip)) return { ips: [ip], nodePorts };
      }
      throw new StatusError(500, 'InternalError', `failed to allocate a serviceIP: range ${cidr} is full`);
    }, !dryRun);
    if (picked.ips[0]) {
      spec.clusterIP = picked.ips[0];
      spec.clusterIPs = [picked.ips[0]];
    } else if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
    if (health[0]?.nodePort) spec.healthCheckNodePort = health[0].nodePort;
    svc.spec = spec;
    return create();
  });
}
