/**
 * The systemd units nodelet installs, rendered from one place so that `nodelet install`, the
 * committed copies in systemd/units/ and the nspawn tests agree (a unit test checks the copies).
 *
 *   nodelet-server.service   API server + store + scheduler + controllers + registry
 *   nodelet-agent.service    the node agent; KillMode=process so pods survive an agent restart
 *   containerd.service.d/10-nodelet.conf   points the distro containerd at nodelet's config
 */
export interface UnitOptions {
  /** The `nodelet` wrapper installed by `nodelet install` (default /usr/local/bin/nodelet). */
  nodeletBin?: string;
  /** Config directory (default /etc/nodelet). */
  configDir?: string;
  /** State directory (default /var/lib/nodelet). */
  stateDir?: string;
  /** WatchdogSec= in seconds (default 30; tests use 2–4). */
  watchdogSec?: number;
  /** RestartSec= (default "2s"; tests use "200ms"). */
  restartSec?: string;
  /** containerd binary for the drop-in (default /usr/bin/containerd). */
  containerdBin?: string;
}

const d = (o: UnitOptions) => ({
  bin: o.nodeletBin ?? '/usr/local/bin/nodelet',
  etc: o.configDir ?? '/etc/nodelet',
  state: o.stateDir ?? '/var/lib/nodelet',
  wd: o.watchdogSec ?? 30,
  rs: o.restartSec ?? '2s',
  containerd: o.containerdBin ?? '/usr/bin/containerd',
});

export function serverUnit(opts: UnitOptions = {}): string {
  const o = d(opts);
  return `# Installed by \`nodelet install server\`. Local changes: \`systemctl edit nodelet-server\`.
[Unit]
Description=nodelet lab control plane (API server, store, scheduler, controllers, registry)
After=network-online.target
Wants=network-online.target

[Service]
Type=notify
# READY=1 and WATCHDOG=1 come from a systemd-notify child (systemd/src/notify.ts).
NotifyAccess=all
EnvironmentFile=-${o.etc}/server.env
ExecStart=${o.bin} server --data-dir ${o.state}/server $NODELET_SERVER_ARGS
Restart=always
RestartSec=${o.rs}
WatchdogSec=${o.wd}
TimeoutStartSec=120
TimeoutStopSec=30
LimitNOFILE=1048576
UMask=0077
# The server only serves HTTPS and writes its state dir: no capabilities beyond binding a port,
# a read-only OS, no devices, no namespaces. (No MemoryDenyWriteExecute: V8's JIT needs W+X pages.)
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
NoNewPrivileges=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectHome=yes
ProtectSystem=strict
ReadWritePaths=${o.state}
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictRealtime=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM

[Install]
WantedBy=multi-user.target
`;
}

/**
 * Node flags of the agent process, for every launcher (this unit, `nodelet lab up`; the NODE_OPTIONS
 * line below, so every flag here must be one node allows there). Both cut resident memory that
 * start-up's burst grows once and keeps (docs/performance.md, "Agent footprint"):
 * - `--max-semi-space-size=1`: V8's young generation grows to 2 × 16 MiB semi-spaces on a 64-bit
 *   host, filled once by module loading and then kept resident; the agent allocates little once it
 *   runs. Saves ~10 MiB; costs more frequent scavenges (GC ~0.5 % of a core at 30 pods).
 * - `--v8-pool-size=1`: one V8 background worker instead of node's 4. Each worker that compiles or
 *   marks gets a glibc malloc arena of its own, whose freed memory stays resident (9 arenas held
 *   ~10 MiB with 0.3 MiB in use); with one worker there are fewer arenas. Saves ~7–10 MiB of
 *   anonymous RSS; V8's background GC and compile work runs on one thread instead of four (the
 *   process's total CPU is the same work; on a 2-core node the 4 could not all run anyway).
 */
export const AGENT_NODE_OPTIONS = '--max-semi-space-size=1 --v8-pool-size=1';

export function agentUnit(opts: UnitOptions = {}): string {
  const o = d(opts);
  return `# Installed by \`nodelet install agent\` / \`nodelet join\`. Local changes: \`systemctl edit nodelet-agent\`.
[Unit]
Description=nodelet node agent
After=network-online.target containerd.service
Wants=network-online.target containerd.service

[Service]
Type=notify
# READY=1 and WATCHDOG=1 come from a systemd-notify child (systemd/src/notify.ts).
NotifyAccess=all
# The agent's V8 flags (AGENT_NODE_OPTIONS, docs/performance.md); agent.env may override them.
# Quoted: systemd splits an unquoted assignment at spaces.
Environment="NODE_OPTIONS=${AGENT_NODE_OPTIONS}"
EnvironmentFile=-${o.etc}/agent.env
ExecStart=${o.bin} agent --config ${o.etc}/agent.yaml $NODELET_AGENT_ARGS
Restart=always
RestartSec=${o.rs}
WatchdogSec=${o.wd}
TimeoutStartSec=120
# Containers belong to containerd's shims; an agent restart must not kill them.
KillMode=process
Delegate=yes
OOMScoreAdjust=-999
LimitNOFILE=1048576
UMask=0077
# The agent configures netns, veths and iptables through CNI: it keeps its privileges, but not /home.
ProtectHome=yes

[Install]
WantedBy=multi-user.target
`;
}

export function containerdDropIn(opts: UnitOptions = {}): string {
  const o = d(opts);
  return `# Installed by \`nodelet install agent\`: run the distro containerd with nodelet's CRI/CNI/registry config.
[Service]
ExecStart=
ExecStart=${o.containerd} --config ${o.etc}/containerd.toml
`;
}

/** Where each rendered file goes, relative to the filesystem root. */
export const UNIT_PATHS = {
  server: '/etc/systemd/system/nodelet-server.service',
  agent: '/etc/systemd/system/nodelet-agent.service',
  containerdDropIn: '/etc/systemd/system/containerd.service.d/10-nodelet.conf',
} as const;
