/**
 * The soak's hold on a running lab cluster: which processes run (from the lab's pidfiles), how
 * they were started (their argv and the agent config), and kill/start of each through the lab's
 * own functions (`startLabServer`, `startLabAgent`, `labRuntimeUp`), so a restarted component is
 * exactly what `make up` runs — plus the soak's failpoint plugin dir in the agent's `cniPluginDirs`.
 *
 * Processes are signalled only by the PIDs the lab recorded, checked against their command line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ApiClient, loadKubeconfig } from '@nodelet/api';
import { containerdPaths, labRuntimeUp, runningPid as containerdPid, waitGone } from '@nodelet/lab-runtime';
import { defaultLabOptions, labPaths, startLabAgent, startLabServer, type LabOptions } from '../lab/cluster.js';
import { runningPid } from '../lab/processes.js';

export type Component = 'agent' | 'server' | 'containerd';

export interface LabControl {
  readonly options: LabOptions;
  readonly paths: ReturnType<typeof labPaths>;
  readonly runtimeEndpoint: string;
  /** The agent's pod log dir (`podLogsDir` of its config). */
  readonly podLogsDir: string;
  /** The agent's `cgroupRoot` when it makes pod cgroups (`cgroupsPerQOS`), else undefined. */
  readonly podCgroupRoot: string | undefined;
  /** The CNI plugin dirs the agent used before the soak (where the real plugins are). */
  readonly realPluginDirs: readonly string[];
  pid(c: Component): Promise<number | undefined>;
  /** Signals the component's recorded PID; with SIGKILL/SIGTERM waits until it is gone. Returns the PID, if one ran. */
  kill(c: Component, sig: 'SIGKILL' | 'SIGTERM'): Promise<number | undefined>;
  /** Starts the component unless it runs (agent: waits for node Ready; server: /readyz; containerd: CRI). */
  start(c: Component): Promise<void>;
  /** A fresh admin client (the caller closes it). */
  admin(timeoutMs?: number): Promise<ApiClient>;
}

/** Argument values of `--flag value` in an argv. */
function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}

/**
 * Reads how the lab in `stateDir` runs. Throws (saying to run `make up`) when its server or agent
 * is not running. `cniPluginDirs`, when given, is what the agent gets on its next start.
 */
export async function attachLab(stateDir: string, cniPluginDirs?: (real: readonly string[]) => string[]): Promise<LabControl> {
  const probe = defaultLabOptions({ stateDir });
  const paths = labPaths(probe.stateDir);
  const agentPid = await runningPid(paths.agentProc, probe.stateDir);
  const serverPid = await runningPid(paths.serverProc, probe.stateDir);
  if (agentPid === undefined || serverPid === undefined) {
    throw new Error(`no lab cluster runs in ${probe.stateDir} (server ${serverPid ? 'running' : 'stopped'}, agent ${agentPid ? 'running' : 'stopped'}): start one with \`make up\``);
  }
  const agentArgv = argvOf(agentPid);
  const serverArgv = argvOf(serverPid);
  const conf = (parseYaml(readFileSync(paths.agentConfig, 'utf8')) ?? {}) as { cniBridgeName?: string; podLogsDir?: string; cniPluginDirs?: string[]; proxy?: { mode?: string }; cgroupsPerQOS?: boolean; cgroupRoot?: string };
  const realPluginDirs = (conf.cniPluginDirs ?? ['/usr/lib/cni', '/opt/cni/bin']).filter((d) => !d.includes('cni-fp'));
  const options = defaultLabOptions({
    stateDir: probe.stateDir,
    nodeName: flag(agentArgv, '--node-name'),
    nodeApiPort: Number(flag(agentArgv, '--port') ?? 10250),
    healthzPort: Number(flag(agentArgv, '--healthz-port') ?? 10248),
    apiPort: Number(flag(serverArgv, '--port') ?? 6443),
    registry: flag(serverArgv, '--registry-address'),
    imagesDir: flag(serverArgv, '--registry-root'),
    clusterCidr: flag(serverArgv, '--cluster-cidr'),
    bridge: conf.cniBridgeName,
    proxyMode: conf.proxy?.mode === 'none' ? 'none' : 'nftables',
    cniPluginDirs: cniPluginDirs?.(realPluginDirs),
    readyTimeoutMs: 120_000,
  });
  const runtime = containerdPaths(paths.containerd);
  const runtimeEndpoint = flag(agentArgv, '--container-runtime-endpoint') ?? `unix://${runtime.socket}`;

  const admin = async (timeoutMs = 10_000): Promise<ApiClient> => new ApiClient({ ...(await loadKubeconfig(paths.adminKubeconfig)), timeoutMs });
  const pid = async (c: Component): Promise<number | undefined> => {
    if (c === 'agent') return runningPid(paths.agentProc, options.stateDir);
    if (c === 'server') return runningPid(paths.serverProc, options.stateDir);
    return containerdPid(runtime);
  };
  return {
    options,
    paths,
    runtimeEndpoint,
    podLogsDir: conf.podLogsDir ?? join(options.stateDir, 'pods-logs'),
    podCgroupRoot: conf.cgroupsPerQOS === false ? undefined : (conf.cgroupRoot ?? '/'),
    realPluginDirs,
    pid,
    async kill(c, sig) {
      const p = await pid(c);
      if (p === undefined) return undefined;
      process.kill(p, sig);
      if (!(await waitGone(p, 30_000))) throw new Error(`${c} (pid ${p}) still runs 30 s after ${sig}`);
      return p;
    },
    async start(c) {
      if (c === 'containerd') {
        await labRuntimeUp({ dir: paths.containerd, registry: options.registry, cniBinDir: paths.cniBin, cniConfDir: paths.cniConf });
      } else if (c === 'server') {
        (await startLabServer(options)).close();
      } else {
        const a = await admin();
        try {
          await startLabAgent(options, paths.adminKubeconfig, a, runtimeEndpoint);
        } finally {
          a.close();
        }
      }
    },
    admin,
  };
}
