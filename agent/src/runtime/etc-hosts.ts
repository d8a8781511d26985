/**
 * The pod's /etc/hosts, written by the agent and bind-mounted into every container (kubelet
 * kubelet_pods.go makeHostsMount): containerd would otherwise copy the node's own file, without
 * the pod's name, FQDN or hostAliases.
 *
 *   pod network    "# Kubernetes-managed hosts file." + localhost and ip6 lines + one line per
 *                  pod IP: `<ip>\t<fqdn>\t<hostname>` (with a subdomain) or `<ip>\t<hostname>`
 *   host network   the node's /etc/hosts as it is
 *   both           then, when the pod has hostAliases, "\n# Entries added by HostAliases.\n" and
 *                  one `<ip>\t<name>\t<name>…` line per alias
 *
 * The file lives at `<root-dir>/pods/<uid>/etc-hosts`, is rewritten before each container
 * starts, and goes with the pod directory. A container that mounts something at /etc/hosts
 * itself keeps its own; without a pod IP yet there is nothing to write (kubelet skips it too).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Container, HostAlias, Pod } from '@nodelet/api/agent';
import type { Mount } from '../kubecontainer/cri.js';
import { podDir } from './container-config.js';
import { podHostnameAndDomain } from './pod-hostname.js';

export const ETC_HOSTS_PATH = '/etc/hosts';

/** The managed file's content for a pod on the pod network. */
export function managedHostsContent(podIPs: readonly string[], hostname: string, domain: string, aliases: readonly HostAlias[] | undefined): string {
  let out = '# Kubernetes-managed hosts file.\n';
  out += '127.0.0.1\tlocalhost\n';
  out += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  out += 'fe00::0\tip6-localnet\n';
  out += 'fe00::0\tip6-mcastprefix\n';
  out += 'fe00::1\tip6-allnodes\n';
  out += 'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + aliasesBlock(aliases);
}

function aliasesBlock(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases?.length) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

export interface HostsFileOptions {
  rootDir: string;
  clusterDomain: string;
  /** The node's hosts file, for host-network pods (default /etc/hosts). */
  nodeHostsFile?: string;
}

/**
 * Writes the pod's hosts file and returns the mount for `c`, or undefined when `c` gets none (it
 * mounts /etc/hosts itself, or the pod has no IP yet).
 */
export async function ensureHostsFile(pod: Pod, c: Container, podIPs: readonly string[], o: HostsFileOptions): Promise<Mount | undefined> {
  if (podIPs.length === 0) return undefined;
  if ((c.volumeMounts ?? []).some((m) => m.mountPath.replace(/\/+$/, '') === ETC_HOSTS_PATH)) return undefined;
  const dir = podDir(o.rootDir, pod.metadata.uid!);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'etc-hosts');
  const aliases = pod.spec?.hostAliases;
  let content: string;
  if (pod.spec?.hostNetwork) {
    content = (await readFile(o.nodeHostsFile ?? ETC_HOSTS_PATH, 'utf8')) + aliasesBlock(aliases);
  } else {
    const { hostname, domain } = podHostnameAndDomain(pod, o.clusterDomain);
    content = managedHostsContent(podIPs, hostname, domain, aliases);
  }
  await writeFile(file, content, { mode: 0o644 });
  return { containerPath: ETC_HOSTS_PATH, hostPath: file, readonly: false, propagation: 'PROPAGATION_PRIVATE' };
}
