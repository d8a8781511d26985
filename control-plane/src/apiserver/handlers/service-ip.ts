/**
 * ClusterIP allocation for Services (kube-apiserver's service IP allocator, simplified): the
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

const toIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** Fills spec.clusterIP(s) of a new ClusterIP/NodePort/LoadBalancer Service, then runs `create`. */
export async function withClusterIp<T>(ctx: ServerContext, svc: ApiObject, create: () => Promise<T>, cidr = DEFAULT_SERVICE_CIDR): Promise<T> {
  const spec = (svc.spec ?? {}) as Json;
  if (spec.type === 'ExternalName' || spec.clusterIP === 'None' || (typeof spec.clusterIP === 'string' && spec.clusterIP !== '')) {
    if (spec.clusterIP && !spec.clusterIPs) spec.clusterIPs = [spec.clusterIP];
    return create();
  }
  return lock.use(async () => {
    const services = ctx.resource('', 'v1', 'services')!;
    const used = new Set((await services.registry.list({ filter: MATCH_ALL })).items.map((s) => (s.spec as Json | undefined)?.clusterIP));
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
