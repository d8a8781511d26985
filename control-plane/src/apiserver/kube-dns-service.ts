/**
 * The `kube-system/kube-dns` Service the cluster's pods use as their nameserver (the kubelet's
 * `clusterDNS`): `--cluster-dns`, by default the service range's 10th address (10.96.0.10). nodelet runs no DNS pods: every
 * agent answers on its own node-local resolver and its service proxy sends this Service's IP there,
 * so the Service has no selector and no endpoints (docs/services.md).
 *
 * Created at server start when missing, with kubeadm's shape (ports dns 53/UDP, dns-tcp 53/TCP,
 * metrics 9153/TCP; labels k8s-app=kube-dns, kubernetes.io/name=CoreDNS). Like kubeadm's addon it
 * is not reconciled afterwards: an existing object is left as it is, and one that was deleted comes
 * back at the next server start. When another Service already holds the IP, a warning says so and
 * nothing is created.
 */
import { formatIpv4, parseIpv4, tryParseIpv4, type Logger } from '@nodelet/base';
import type { ServerContext } from './context.js';
import { MATCH_ALL } from './filter.js';
import { admitCreate } from './handlers/admit.js';
import { DEFAULT_SERVICE_CIDR } from './handlers/service-ip.js';
import type { ApiObject, Json } from './object.js';
import { StatusError } from './status.js';

const NAMESPACE = 'kube-system';
const NAME = 'kube-dns';

/** True when `ip` is a usable address of `cidr` (not its network or broadcast address). */
export function inServiceCidr(ip: string, cidr = DEFAULT_SERVICE_CIDR): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const n = tryParseIpv4(ip);
  const b = tryParseIpv4(base);
  if (n === undefined || b === undefined) return false;
  const size = 2 ** (32 - Number(bits));
  const off = n - b;
  return off > 0 && off < size - 1;
}

/** The default kube-dns IP: the 10th address of the service range (kubeadm's rule; 10.96.0.10). */
export function clusterDnsIpOf(cidr: string): string {
  const [base = ''] = cidr.split('/');
  return formatIpv4(parseIpv4(base) + 10);
}

export function kubeDnsService(clusterIP: string): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: NAME,
      namespace: NAMESPACE,
      labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
      annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
      ],
    },
  };
}

/** Creates kube-system/kube-dns with `clusterIP` unless it exists. Idempotent; throws only on store errors. */
export async function ensureKubeDnsService(ctx: ServerContext, clusterIP: string, log: Logger): Promise<void> {
  const services = ctx.resource('', 'v1', 'services')!;
  if (await services.registry.find(NAMESPACE, NAME)) return;
  const holder = (await services.registry.list({ filter: MATCH_ALL })).items.find((s) => {
    const spec = (s.spec ?? {}) as Json;
    return spec.clusterIP === clusterIP || (Array.isArray(spec.clusterIPs) && spec.clusterIPs.includes(clusterIP));
  });
  if (holder) {
    log.warn({ clusterIP, service: `${holder.metadata.namespace}/${holder.metadata.name}` }, 'Cluster DNS Service IP is held by another Service, kube-dns not created');
    return;
  }
  const obj = admitCreate(ctx, services.def, kubeDnsService(clusterIP));
  await services.registry.create(obj).catch((err: unknown) => {
    if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
  });
  log.info({ clusterIP }, 'Cluster DNS Service created');
}
