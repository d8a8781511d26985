/**
 * A pod's hostname and domain as kubelet makes them (GeneratePodHostNameAndDomain): the UTS
 * namespace's hostname (the sandbox config) and the /etc/hosts lines (etc-hosts.ts) read the same.
 */
import { AgentError } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';

/** kubelet's hostname and domain of a pod: `spec.hostname` or the name (63 characters at most, no trailing '-' or '.'); the subdomain's FQDN suffix. */
export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  const spec = pod.spec!;
  const hostname = spec.hostname || (pod.metadata.name ?? '').slice(0, 63).replace(/[-.]+$/, '');
  const domain = spec.subdomain ? `${spec.subdomain}.${pod.metadata.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/** kubelet's longest hostname (a FQDN made by setHostnameAsFQDN included). */
export const HOSTNAME_MAX_LEN = 64;

/**
 * The hostname the pod's UTS namespace gets (kubelet GeneratePodHostNameAndDomain): the short name,
 * or with `setHostnameAsFQDN` and a subdomain `<hostname>.<subdomain>.<ns>.svc.<clusterDomain>`,
 * refused over 64 characters with kubelet's message (the sandbox is not created).
 */
export function sandboxHostname(pod: Pod, clusterDomain: string): string {
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  if (!pod.spec?.setHostnameAsFQDN || !domain) return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > HOSTNAME_MAX_LEN) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${HOSTNAME_MAX_LEN} characters is the max, ${fqdn.length} characters requested)`, { retryable: false });
  }
  return fqdn;
}
