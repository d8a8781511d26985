/**
 * `nodelet install server|agent` and `nodelet uninstall`: put nodelet on a systemd host the way an
 * operator expects (units in /etc/systemd/system, config in /etc/nodelet, state in
 * /var/lib/nodelet, a `nodelet` wrapper in /usr/local/bin), then daemon-reload, enable and start.
 *
 * Idempotent: every file is written only when its content differs, and systemd is reloaded only
 * when a unit changed, so a second run reports "unchanged" for everything and restarts nothing.
 * Uninstall removes exactly the manifest's files; --purge also removes the state and config dirs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { agentUnit, containerdDropIn, serverUnit, UNIT_PATHS } from '@nodelet/systemd';
import { AgentError } from '@nodelet/base';
import { InstallRoot, type WriteOutcome } from './files.js';

/** Runs `systemctl` (the process boundary tests replace). */
export type Systemctl = (args: string[]) => { code: number; output: string };

export const realSystemctl: Systemctl = (args) => {
  const r = spawnSync('systemctl', args, { encoding: 'utf8' });
  return { code: r.status ?? 1, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
};

export interface InstallCommon {
  /** Filesystem root (tests install into a temp dir). */
  root?: string;
  configDir?: string;
  stateDir?: string;
  binPath?: string;
  /** Don't enable/start units (files only). */
  noStart?: boolean;
  systemctl?: Systemctl;
  /** Where the nodelet tree that the wrapper runs lives (default: this checkout). */
  sourceDir?: string;
  nodeBin?: string;
  watchdogSec?: number;
  restartSec?: string;
}

export interface InstallReport {
  files: Array<{ path: string; outcome: WriteOutcome }>;
  started: string[];
  changed: boolean;
}

const DEFAULTS = { configDir: '/etc/nodelet', stateDir: '/var/lib/nodelet', binPath: '/usr/local/bin/nodelet' };

function checkoutRoot(): string {
  // cli/src/commands/ops (sources) or cli/dist/commands/ops (built): four levels up is the tree root.
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
}

function wrapper(nodeBin: string, sourceDir: string): string {
  return `#!/bin/sh\n# Installed by \`nodelet install\`: runs nodelet from ${sourceDir}.\nexec ${nodeBin} ${join(sourceDir, 'bin', 'nodelet')} "$@"\n`;
}

function envFile(name: string, args: string[]): string {
  return `# Extra arguments for ${name}; edit and \`systemctl restart ${name}\`.\n${name === 'nodelet-server' ? 'NODELET_SERVER_ARGS' : 'NODELET_AGENT_ARGS'}=${args.join(' ')}\n`;
}

function enableAndStart(sc: Systemctl, units: string[], unitsChanged: boolean, fs: InstallRoot): void {
  if (unitsChanged) {
    const r = sc(['daemon-reload']);
    if (r.code !== 0) throw new AgentError('ERR_FAILED_PRECONDITION', `systemctl daemon-reload failed: ${r.output}; is systemd running (PID 1)?`);
  }
  for (const u of units) {
    // `is-enabled` exits 0 only when enabled: remember what we switch on, so uninstall switches it off.
    if (sc(['is-enabled', '--quiet', u]).code !== 0) fs.recordEnabled(u);
    const en = sc(['enable', u]);
    if (en.code !== 0) throw new AgentError('ERR_INTERNAL', `enabling ${u} failed: ${en.output}`);
    // A changed file must take effect; an unchanged install must not restart anything.
    const r = sc([unitsChanged ? 'restart' : 'start', u]);
    if (r.code !== 0) {
      throw new AgentError('ERR_INTERNAL', `starting ${u} failed: ${r.output}; see \`journalctl -u ${u}\``);
    }
  }
}

export interface ServerInstallOptions extends InstallCommon {
  port?: number;
  bindAddress?: string;
  extraArgs?: string[];
  /**
   * `--join`: the shared secrets fetched from the first server (server-join.ts), written under
   * the server's data dir (paths relative to it), and the flags that use them.
   */
  join?: { files: Array<{ path: string; content: string; mode: number }>; args: string[] };
}

/** The server's --data-dir under systemd (units.ts: `<state>/server`). */
export function serverDataDir(stateDir = DEFAULTS.stateDir): string {
  return join(stateDir, 'server');
}

export function installServer(o: ServerInstallOptions): InstallReport {
  const c = { ...DEFAULTS, ...o };
  const fs = new InstallRoot({ root: o.root, stateDir: c.stateDir });
  const unitOpts = { nodeletBin: c.binPath, configDir: c.configDir, stateDir: c.stateDir, watchdogSec: o.watchdogSec, restartSec: o.restartSec };
  const source = o.sourceDir ?? checkoutRoot();
  const args = [
    // The server runs from / under systemd: give it the image store by absolute path.
    '--registry-root', join(source, 'build', 'images'),
    ...(o.port ? ['--port', String(o.port)] : []),
    ...(o.bindAddress ? ['--bind-address', o.bindAddress] : []),
    ...(o.join?.args ?? []),
    ...(o.extraArgs ?? []),
  ];
  const files: InstallReport['files'] = [];
  const put = (p: string, s: string, mode?: number) => files.push({ path: p, outcome: fs.write('server', p, s, mode) });
  for (const f of o.join?.files ?? []) {
    // A data dir of another cluster keeps its CA: replacing it would orphan every credential it signed.
    const existing = fs.path(f.path);
    if (existsSync(existing) && readFileSync(existing, 'utf8') !== f.content) {
      throw new AgentError('ERR_FAILED_PRECONDITION', `${f.path} already exists with other content (this machine belongs to another cluster?); remove ${dirname(dirname(f.path))} to join this one`);
    }
    put(f.path, f.content, f.mode);
  }
  put(c.binPath, wrapper(o.nodeBin ?? process.execPath, source), 0o755);
  put(join(c.configDir, 'server.env'), envFile('nodelet-server', args), 0o600);
  put(UNIT_PATHS.server, serverUnit(unitOpts));
  fs.save();
  const changed = files.some((f) => f.outcome !== 'unchanged');
  const started: string[] = [];
  if (!o.noStart) {
    enableAndStart(o.systemctl ?? realSystemctl, ['nodelet-server.service'], changed, fs);
    fs.save();
    started.push('nodelet-server.service');
  }
  return { files, started, changed };
}

export interface AgentInstallOptions extends InstallCommon {
  kubeconfig?: string;
  nodeName?: string;
  /** containerd config nodelet wants (rendered by the lab runtime); written to <configDir>/containerd.toml. */
  containerdConfig?: string;
  /** Extra files the runtime config needs (e.g. hosts.toml for the registry). */
  extraFiles?: Array<{ path: string; content: string }>;
  /** KubeletConfiguration fields for <configDir>/agent.yaml. */
  agentConfig?: Record<string, unknown>;
  extraArgs?: string[];
}

export function installAgent(o: AgentInstallOptions): InstallReport {
  const c = { ...DEFAULTS, ...o };
  const fs = new InstallRoot({ root: o.root, stateDir: c.stateDir });
  const unitOpts = { nodeletBin: c.binPath, configDir: c.configDir, stateDir: c.stateDir, watchdogSec: o.watchdogSec, restartSec: o.restartSec };
  const args = [
    '--kubeconfig', o.kubeconfig ?? join(c.configDir, 'agent.kubeconfig'),
    ...(o.nodeName ? ['--node-name', o.nodeName] : []),
    ...(o.extraArgs ?? []),
  ];
  const agentConf: Record<string, unknown> = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    rootDir: join(c.stateDir, 'agent'),
    // CNI state under our state dir, so `uninstall --purge` takes it along.
    cniCacheDir: join(c.stateDir, 'cni'),
    cniIpamDataDir: join(c.stateDir, 'cni', 'networks'),
    ...o.agentConfig,
  };
  const agentYaml = toYaml(agentConf);
  const files: InstallReport['files'] = [];
  const put = (p: string, s: string, mode?: number) => files.push({ path: p, outcome: fs.write('agent', p, s, mode) });
  put(c.binPath, wrapper(o.nodeBin ?? process.execPath, o.sourceDir ?? checkoutRoot()), 0o755);
  put(join(c.configDir, 'agent.env'), envFile('nodelet-agent', args), 0o600);
  put(join(c.configDir, 'agent.yaml'), agentYaml, 0o600);
  if (o.containerdConfig !== undefined) {
    put(join(c.configDir, 'containerd.toml'), o.containerdConfig);
    put(UNIT_PATHS.containerdDropIn, containerdDropIn(unitOpts));
  }
  for (const f of o.extraFiles ?? []) put(f.path, f.content);
  put(UNIT_PATHS.agent, agentUnit(unitOpts));
  // What the agent itself writes into the runtime's CNI dirs at start.
  const cniBin = String(agentConf.cniBinDir ?? '/opt/cni/bin');
  const cniConf = String(agentConf.cniConfDir ?? '/etc/cni/net.d');
  for (const f of [join(cniConf, '10-nodelet.conflist'), join(cniBin, 'nodelet-cni'), join(cniBin, 'loopback')]) {
    if (!existsSync(fs.path(f))) fs.adopt('agent', f);
  }
  fs.save();
  const changed = files.some((f) => f.outcome !== 'unchanged');
  const started: string[] = [];
  if (!o.noStart) {
    const units = [...(o.containerdConfig !== undefined ? ['containerd.service'] : []), 'nodelet-agent.service'];
    enableAndStart(o.systemctl ?? realSystemctl, units, changed, fs);
    fs.save();
    started.push(...units);
  }
  return { files, started, changed };
}

export interface UninstallOptions extends InstallCommon {
  purge?: boolean;
}

export function uninstall(o: UninstallOptions): { removed: string[]; keptModified: string[]; purged: string[] } {
  const c = { ...DEFAULTS, ...o };
  const sc = o.systemctl ?? realSystemctl;
  const fs = new InstallRoot({ root: o.root, stateDir: c.stateDir });
  const installed = new Set(fs.entries().map((e) => e.path));
  const units = [
    installed.has(UNIT_PATHS.agent) && 'nodelet-agent.service',
    installed.has(UNIT_PATHS.server) && 'nodelet-server.service',
  ].filter((u): u is string => typeof u === 'string');
  if (!o.noStart) for (const u of units) sc(['disable', '--now', u]);
  const hadDropIn = installed.has(UNIT_PATHS.containerdDropIn);
  const enabledByUs = fs.enabledUnits.filter((u) => !units.includes(u));
  const res = fs.remove();
  if (!o.noStart && units.length) sc(['daemon-reload']);
  if (!o.noStart) {
    // Units we enabled go back to disabled; a containerd we reconfigured restarts with its own config.
    for (const u of enabledByUs) sc(['disable', '--now', u]);
    if (hadDropIn && !enabledByUs.includes('containerd.service')) sc(['try-restart', 'containerd.service']);
  }
  const purged: string[] = [];
  if (o.purge) {
    for (const d of [c.stateDir, c.configDir]) {
      rmSync(fs.path(d), { recursive: true, force: true });
      purged.push(d);
    }
  }
  return { ...res, purged };
}
