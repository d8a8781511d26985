/**
 * The containerd configuration `nodelet install agent` / `nodelet join` give the distro's
 * containerd: a whole config file (/etc/nodelet/containerd.toml) that the systemd drop-in
 * passes with --config, so /etc/containerd/config.toml is left untouched and uninstall is a
 * clean revert. Roots and sockets stay containerd's defaults; the CRI section is the lab
 * runtime's (restrict_oom_score_adj, sandbox image from the cluster registry, nodelet's CNI dirs,
 * plain-HTTP hosts.toml for the registry).
 */
import { join } from 'node:path';
import { renderCriSection, renderHostsToml, defaultSandboxImage } from '@nodelet/lab-runtime';

export interface NodeRuntimeConfigOptions {
  configDir: string;
  registry: string;
  cniBinDir: string;
  cniConfDir: string;
}

export function nodeRuntimeFiles(o: NodeRuntimeConfigOptions): { containerdToml: string; hostsToml: { path: string; content: string } } {
  const certsDir = join(o.configDir, 'certs.d');
  const cri = renderCriSection({
    sandboxImage: defaultSandboxImage(o.registry),
    cniBinDir: o.cniBinDir,
    cniConfDir: o.cniConfDir,
    certsDir,
    // cgroupfs driver: the agent passes cgroupfs-style parents, which runc's systemd driver rejects
    // ("expected cgroupsPath to be of format slice:prefix:name").
    systemdCgroup: false,
  });
  return {
    containerdToml: `# Written by nodelet install: containerd runs with this file (see containerd.service.d/10-nodelet.conf).\nversion = 2\n\n${cri}`,
    hostsToml: { path: join(certsDir, o.registry, 'hosts.toml'), content: renderHostsToml(o.registry) },
  };
}
