/**
 * Node checks of `nodelet doctor`: the container runtime (socket, CRI version, RuntimeReady and
 * NetworkReady), the CNI plugins the node chain needs (present, executable, VERSION answers), and
 * the runtime-facing conflist.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connectCriClient } from '@nodelet/cri-client';
import { CniEngine, listNetworkConfigs } from '@nodelet/cni';
import { describeError } from '@nodelet/base';
import type { Check, CheckResult } from './check.js';

export interface NodeCheckOptions {
  runtimeEndpoint: string;
  /** Directories holding the real plugins (bridge, host-local, portmap, loopback). */
  pluginDirs: string[];
  /** The runtime's CNI conf dir (holds nodelet's one-plugin conflist). */
  cniConfDir: string;
  /** The runtime's CNI bin dir (holds nodelet-cni and loopback). */
  cniBinDir: string;
}

export const REQUIRED_PLUGINS = ['bridge', 'host-local', 'portmap', 'loopback'] as const;

export function runtimeCheck(o: NodeCheckOptions): Check {
  return {
    id: 'runtime',
    title: 'container runtime',
    async run(signal): Promise<CheckResult[]> {
      const sock = o.runtimeEndpoint.replace(/^unix:\/\//, '');
      if (!existsSync(sock)) {
        return [{ id: 'runtime.socket', level: 'fail', message: `runtime socket ${sock} does not exist`, fix: 'start containerd (`nodelet runtime up` on a lab machine, `systemctl start containerd` otherwise) or pass --container-runtime-endpoint' }];
      }
      let conn;
      try {
        conn = await connectCriClient({ endpoint: o.runtimeEndpoint, timeoutMs: 5_000, signal });
      } catch (err) {
        return [{ id: 'runtime.socket', level: 'fail', message: describeError(err), fix: 'check `journalctl -u containerd` (or the lab runtime log) and restart containerd' }];
      }
      const out: CheckResult[] = [];
      try {
        const v = conn.version;
        out.push({ id: 'runtime.version', level: 'pass', message: `${v.runtimeName} ${v.runtimeVersion}, CRI ${v.runtimeApiVersion} at ${o.runtimeEndpoint}` });
        const st = await conn.client.runtime.status({ verbose: false }, { signal, timeoutMs: 5_000 });
        for (const type of ['RuntimeReady', 'NetworkReady']) {
          const c = st.status?.conditions?.find((x) => x.type === type);
          if (c?.status) out.push({ id: `runtime.${type}`, level: 'pass', message: `${type}=true` });
          else {
            out.push({
              id: `runtime.${type}`, level: 'fail',
              message: `${type}=false${c?.reason ? ` (${c.reason}: ${c.message})` : ''}`,
              fix: type === 'NetworkReady' ? `the runtime found no CNI config in ${o.cniConfDir}: start the agent (it writes it) or check \`nodelet cni ls\`` : 'see the runtime log',
            });
          }
        }
      } finally {
        conn.client.close();
      }
      return out;
    },
  };
}

export function cniPluginsCheck(o: NodeCheckOptions): Check {
  return {
    id: 'cni.plugins',
    title: 'CNI plugins',
    async run(signal): Promise<CheckResult[]> {
      const engine = new CniEngine({ binDirs: o.pluginDirs, execTimeoutMs: 5_000 });
      const out: CheckResult[] = [];
      for (const type of REQUIRED_PLUGINS) {
        const found = o.pluginDirs.map((d) => join(d, type)).find((p) => existsSync(p));
        if (!found) {
          out.push({ id: `cni.plugin.${type}`, level: 'fail', message: `CNI plugin "${type}" not found in ${o.pluginDirs.join(', ')}`, fix: 'apt-get install containernetworking-plugins (or set cniPluginDirs)' });
          continue;
        }
        try {
          accessSync(found, constants.X_OK);
        } catch {
          out.push({ id: `cni.plugin.${type}`, level: 'fail', message: `${found} is not executable`, fix: `chmod 0755 ${found}` });
          continue;
        }
        try {
          const v = await engine.pluginVersion(type, { signal });
          out.push({ id: `cni.plugin.${type}`, level: 'pass', message: `${found} supports CNI ${v.supportedVersions.join(', ')}` });
        } catch (err) {
          out.push({ id: `cni.plugin.${type}`, level: 'fail', message: `${found} VERSION failed: ${describeError(err)}`, fix: 'reinstall containernetworking-plugins' });
        }
      }
      return out;
    },
  };
}

export function cniConfigCheck(o: NodeCheckOptions): Check {
  return {
    id: 'cni.config',
    title: 'CNI configuration',
    async run(): Promise<CheckResult[]> {
      if (!existsSync(o.cniConfDir) || !statSync(o.cniConfDir).isDirectory()) {
        return [{ id: 'cni.config', level: 'warn', message: `${o.cniConfDir} does not exist`, fix: 'start the agent: it writes the runtime conflist there' }];
      }
      const entries = await listNetworkConfigs(o.cniConfDir);
      if (entries.length === 0) {
        return [{ id: 'cni.config', level: 'warn', message: `no network configuration in ${o.cniConfDir}`, fix: 'start the agent: it writes the runtime conflist there' }];
      }
      // The runtime uses the first valid file in name order; an invalid file before it is a trap.
      const out: CheckResult[] = [];
      for (const e of entries) {
        if (e.error) {
          out.push({ id: 'cni.config', level: 'fail', message: `${e.file}: ${e.error.details ?? e.error.message}`, fix: 'fix or remove the file' });
          continue;
        }
        const list = e.list!;
        out.push({ id: 'cni.config', level: 'pass', message: `${e.file}: network "${list.name}", cniVersion ${list.cniVersion}, plugins ${list.plugins.map((p) => p.type).join(', ')}` });
        const shim = join(o.cniBinDir, 'nodelet-cni');
        if (list.plugins.some((p) => p.type === 'nodelet-cni') && !existsSync(shim)) {
          out.push({ id: 'cni.shim', level: 'fail', message: `${shim} is missing (the runtime cannot call the agent)`, fix: 'restart the agent: it installs nodelet-cni into the runtime bin dir' });
        }
        break;
      }
      return out;
    },
  };
}
