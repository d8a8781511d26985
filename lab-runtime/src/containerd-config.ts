/**
 * containerd 1.6 configuration for a lab node (docs/reference/cri-and-crictl.md §5): a config file
 * (version 2) for a containerd with its own root, state and sockets, and the `hosts.toml` files
 * that mark local registries as plain HTTP. Pure functions: they render text, callers write it.
 */

export interface ContainerdConfigOptions {
  /** containerd `root` (images, snapshots). */
  root: string;
  /** containerd `state` (sockets, task bundles, netns files, runc state). */
  state: string;
  /** gRPC unix socket path (no `unix://`). */
  socket: string;
  /** `host:port/pause:tag` of the sandbox image. */
  sandboxImage: string;
  cniBinDir: string;
  cniConfDir: string;
  /** Directory of `<host>/hosts.toml` files (`registry.config_path`). */
  certsDir: string;
  /** Use runc's systemd cgroup driver; only where systemd is PID 1. Default false. */
  systemdCgroup?: boolean;
  /** Snapshotter; default overlayfs. */
  snapshotter?: string;
  /**
   * Path of the crun binary: when set, a `crun` runtime handler is configured beside `runc`
   * (containerd's runc shim running crun), which a RuntimeClass with `handler: crun` selects.
   */
  crunBinary?: string;
}

/** Where crun is looked for (Debian's crun package). */
export const CRUN_BINARY = '/usr/bin/crun';

/** Plugins that probe or need host-wide setup we never use on a lab node. */
const DISABLED_PLUGINS = [
  'io.containerd.snapshotter.v1.aufs',
  'io.containerd.snapshotter.v1.btrfs',
  'io.containerd.snapshotter.v1.devmapper',
  'io.containerd.snapshotter.v1.zfs',
  'io.containerd.tracing.processor.v1.otlp',
  'io.containerd.internal.v1.tracing',
];

const CRI = 'plugins."io.containerd.grpc.v1.cri"';

/** TOML basic string (quotes and backslashes escaped). */
export function tomlString(s: string): string {
  return JSON.stringify(s);
}

/**
 * A whole containerd config for a private instance. Everything host-wide is moved under
 * `root`/`state`: runc's root (default /run/containerd/runc), netns files (default
 * /var/run/netns), the opt dir (default /opt/containerd); so instances never share state.
 */
export function renderContainerdConfig(o: ContainerdConfigOptions): string {
  const q = tomlString;
  return `# Written by nodelet (lab-runtime). A private containerd: own root, state and sockets.
version = 2
root = ${q(o.root)}
state = ${q(o.state)}
disabled_plugins = [${DISABLED_PLUGINS.map(q).join(', ')}]

[grpc]
  address = ${q(o.socket)}

[ttrpc]
  address = ${q(o.socket + '.ttrpc')}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(o.root + '/opt')}

${renderCriSection({ ...o, runcRoot: o.state + '/runc', crunRoot: o.state + '/crun', netnsUnderState: true })}`;
}

/**
 * The `[plugins."io.containerd.grpc.v1.cri"]` section alone: also the drop-in for a distro
 * containerd (`nodelet runtime up --print-dropin`), where runc root and netns stay default.
 */
export function renderCriSection(o: Omit<ContainerdConfigOptions, 'root' | 'state' | 'socket'> & { runcRoot?: string; crunRoot?: string; netnsUnderState?: boolean }): string {
  const q = tomlString;
  const lines = [
    `[${CRI}]`,
    `  sandbox_image = ${q(o.sandboxImage)}`,
    `  # runc cannot set oom_score_adj -998 on these hosts; clamp to containerd's own.`,
    `  restrict_oom_score_adj = true`,
    `  stream_server_address = "127.0.0.1"`,
    `  stream_server_port = "0"`,
  ];
  if (o.netnsUnderState) lines.push(`  netns_mounts_under_state_dir = true`);
  lines.push(
    `  [${CRI}.containerd]`,
    `    snapshotter = ${q(o.snapshotter ?? 'overlayfs')}`,
    `    default_runtime_name = "runc"`,
    `    [${CRI}.containerd.runtimes.runc]`,
    `      runtime_type = "io.containerd.runc.v2"`,
    `      [${CRI}.containerd.runtimes.runc.options]`,
    `        SystemdCgroup = ${o.systemdCgroup ? 'true' : 'false'}`,
  );
  if (o.runcRoot) lines.push(`        Root = ${q(o.runcRoot)}`);
  if (o.crunBinary) {
    lines.push(
      `    [${CRI}.containerd.runtimes.crun]`,
      `      runtime_type = "io.containerd.runc.v2"`,
      `      [${CRI}.containerd.runtimes.crun.options]`,
      `        BinaryName = ${q(o.crunBinary)}`,
      `        SystemdCgroup = ${o.systemdCgroup ? 'true' : 'false'}`,
    );
    if (o.crunRoot) lines.push(`        Root = ${q(o.crunRoot)}`);
  }
  lines.push(
    `  [${CRI}.cni]`,
    `    bin_dir = ${q(o.cniBinDir)}`,
    `    conf_dir = ${q(o.cniConfDir)}`,
    `    max_conf_num = 1`,
    `  [${CRI}.registry]`,
    `    config_path = ${q(o.certsDir)}`,
  );
  return lines.join('\n') + '\n';
}

/** `certs.d/<hostPort>/hosts.toml` content marking `hostPort` as a plain-HTTP pull registry. */
export function renderHostsToml(hostPort: string): string {
  const url = `http://${hostPort}`;
  return `# Written by nodelet: ${hostPort} is a local read-only registry over plain HTTP.
server = ${tomlString(url)}

[host.${tomlString(url)}]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`;
}

/**
 * The upstream registries a lab registry mirrors: manifests name their images there (`busybox` is
 * `docker.io/library/busybox`), and the lab answers them from its image store first.
 */
export const MIRRORED_REGISTRIES = ['docker.io', 'registry.k8s.io', 'quay.io', 'ghcr.io', 'gcr.io'] as const;

/** Where containerd pulls `upstream` from without hosts.toml (Docker Hub's API is not at docker.io). */
export function upstreamServer(upstream: string): string {
  return upstream === 'docker.io' ? 'https://registry-1.docker.io' : `https://${upstream}`;
}

/**
 * `certs.d/<upstream>/hosts.toml` content sending pulls of `upstream` to the plain-HTTP registry
 * `mirror` (`host:port`) first; containerd falls back to `server` (default: the upstream's own)
 * only when the mirror fails. containerd asks the mirror for `/v2/<name>/…?ns=<upstream>`.
 */
export function renderMirrorHostsToml(upstream: string, mirror: string, server: string = upstreamServer(upstream)): string {
  const url = `http://${mirror}`;
  return `# Written by nodelet: pulls of ${upstream} try the lab registry ${mirror} first.
server = ${tomlString(server)}

[host.${tomlString(url)}]
  capabilities = ["pull", "resolve"]
`;
}

/** A bridge + host-local conflist (containerd adds loopback itself). No masquerade: lab traffic stays local. */
export function renderBridgeConflist(o: { networkName: string; bridge: string; subnet: string; ipamDataDir: string }): string {
  return (
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: o.networkName,
        plugins: [
          {
            type: 'bridge',
            bridge: o.bridge,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: { type: 'host-local', ranges: [[{ subnet: o.subnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: o.ipamDataDir },
          },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}
