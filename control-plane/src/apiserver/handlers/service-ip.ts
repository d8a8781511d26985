/**
 * ClusterIP (and NodePort) allocation for Services (kube-apiserver's service IP allocator, simplified): the
 * lowest free address of the service range not already used by a Service, skipping the network
 * address and .1 (reserved for the `kubernetes` Service). Allocations are serialized in-process;
 * the store's create CAS settles races with a second server only by name, so run one server.
 */
import { Semaphore } from '@nodelet/base';
import type { ServerContext } from '../context.js';
import { MATCH_ALL } from '../filter.js';
import type { ApiObject, Json } from '../object.js';
import { StatusError } from '../status.js';

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/16';
const lock = new Semaphore(1);

function parseCidr(cidr: string): { base: number; size: number } {
  const [ip = '', bits = '32'] = cidr.split('/');
  const octets = ip.split('.').map(Number);
  const base = (((octets[0]! << 24) >>> 0) + (octets[1]! << 16) + (octets[2]! << 8) + octets[3]!) >>> 0;
  return { base, size: 2 ** (32 - Number(bits)) };
}

/** NodePort range of kube-apiserver's default --service-node-port-range. */
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

function allocateNodePorts(ports: Json[], existing: ApiObject[]): void {
  const used = new Set<number>();
  for (const svc of existing) for (const p of ((svc.spec as Json | undefined)?.ports ?? []) as Json[]) if (typeof p.nodePort === 'number') used.add(p.nodePort);
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
  return toIp(parseCidr(cidr).base + 1);
}

const toIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** Fills spec.clusterIP(s) of a new ClusterIP/NodePort/LoadBalancer Service, then runs `create`. */
export async function withClusterIp<T>(ctx: ServerContext, svc: ApiObject, create: () => Promise<T>, cidr = DEFAULT_SERVICE_CIDR): Promise<T> {
  const spec = (svc.spec ?? {}) as Json;
  const needsIp = !(spec.type === 'ExternalName' || spec.clusterIP === 'None' || (typeof spec.clusterIP === 'string' && spec.clusterIP !== ''));
  const ports = (Array.isArray(spec.ports) ? spec.ports : []) as Json[];
  const needsNodePorts = (spec.type === 'NodePort' || spec.type === 'LoadBalancer') && ports.some((p) => !p.nodePort);
  if (!needsIp && !needsNodePorts) {
    if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
    return create();
  }
  return lock.use(async () => {
    const services = ctx.resource('', 'v1', 'services')!;
    const existing = (await services.registry.list({ filter: MATCH_ALL })).items;
    if (needsNodePorts) allocateNodePorts(ports, existing);
    if (!needsIp) {
      if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
      return create();
    }
    const used = new Set(existing.map((s) => (s.spec as Json | undefined)?.clusterIP));
    const { base, size } = parseCidr(cidr);
    let chosen: string | undefined;
    for (let i = 2; i < size - 1; i++) {
      const ip = toIp(base + i);
      if (!used.has(ip)) {
        chosen = ip;
        break;
      }
    }
    if (!chosen) throw new StatusError(500, 'InternalError', `failed to allocate a serviceIP: range ${cidr} is full`);
    spec.clusterIP = chosen;
    spec.clusterIPs = [chosen];
    svc.spec = spec;
    return create();
  });
}
