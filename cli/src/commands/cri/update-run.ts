/**
 * `nodelet cri update` (UpdateContainerResources with crictl's flags) and `nodelet cri run`
 * (RunPodSandbox + CreateContainer + StartContainer from the two config files, as `crictl run`).
 */
import type { Command } from 'commander';
import { AgentError, describeError } from '@nodelet/base';
import type { LinuxContainerResources, RuntimeService } from '@nodelet/cri-client';
import { io, out, withClients } from './context.js';
import { loadContainerConfig, loadPodSandboxConfig } from './config-file.js';

export interface UpdateOptions {
  cpuShare?: string;
  cpuQuota?: string;
  cpuPeriod?: string;
  memory?: string;
  cpusetCpus?: string;
  cpusetMems?: string;
}

/** A whole number for an int64 field of the request, as a decimal string (the proto loader's Long form). */
function int64(flag: string, v: string | undefined, opts: { min: number }): string | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v) || BigInt(v) < BigInt(opts.min) || BigInt(v) > 2n ** 63n - 1n) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid --${flag} "${v}": use a whole number${opts.min >= 0 ? ' of at least ' + opts.min : ''}`);
  }
  return BigInt(v).toString();
}

/**
 * The LinuxContainerResources crictl sends for these flags. A flag not given is 0 / empty, which
 * the runtime reads as "leave as it is" (containerd only applies non-zero values).
 */
export function resourcesOf(o: UpdateOptions): LinuxContainerResources {
  const r: LinuxContainerResources = {
    cpuShares: int64('cpu-share', o.cpuShare, { min: 0 }),
    cpuQuota: int64('cpu-quota', o.cpuQuota, { min: -1 }),
    cpuPeriod: int64('cpu-period', o.cpuPeriod, { min: 0 }),
    memoryLimitInBytes: int64('memory', o.memory, { min: 0 }),
    cpusetCpus: o.cpusetCpus,
    cpusetMems: o.cpusetMems,
  };
  for (const [k, v] of Object.entries(r)) if (v === undefined) delete (r as Record<string, unknown>)[k];
  if (!Object.keys(r).length) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'nothing to update: give at least one of --cpu-share, --cpu-quota, --cpu-period, --memory, --cpuset-cpus, --cpuset-mems');
  }
  return r;
}

export function registerUpdateRun(cri: Command): void {
  cri
    .command('update')
    .description('update the resources of one or more running containers')
    .argument('<container-id...>')
    .option('--cpu-share <shares>', 'CPU shares (relative weight against other containers)')
    .option('--cpu-quota <usecs>', 'CPU CFS quota: CPU time allowed in each period (-1 for none)')
    .option('--cpu-period <usecs>', 'CPU CFS period (0: the system default)')
    .option('--memory <bytes>', 'memory limit in bytes')
    .option('--cpuset-cpus <cpus>', 'CPUs the container may use (0-3, 0,1)')
    .option('--cpuset-mems <nodes>', 'memory nodes the container may use')
    .action(async (ids: string[], o: UpdateOptions, cmd: Command) => {
      const linux = resourcesOf(o);
      await withClients(cmd, async ({ runtime }) => {
        for (const id of ids) {
          await runtime.runtime.updateContainerResources({ containerId: id, linux });
          out(`${id}\n`);
        }
      });
    });

  cri
    .command('run')
    .description('run a container in a new pod sandbox: runp, pull, create and start in one step')
    .argument('<container-config>', 'ContainerConfig file (JSON or YAML)')
    .argument('<pod-config>', 'PodSandboxConfig file (JSON or YAML)')
    .option('-r, --runtime <handler>', 'runtime handler (RuntimeClass) of the pod sandbox')
    .option('--no-pull', 'do not pull the image (it must be present)')
    .action(async (ctrFile: string, podFile: string, o: { runtime?: string; pull: boolean }, cmd: Command) => {
      const config = await loadContainerConfig(ctrFile);
      const sandboxConfig = await loadPodSandboxConfig(podFile);
      await withClients(cmd, async ({ runtime, image }) => {
        const { podSandboxId } = await runtime.runtime.runPodSandbox({ config: sandboxConfig, runtimeHandler: o.runtime ?? '' });
        try {
          if (o.pull) await image.image.pullImage({ image: config.image ?? {}, sandboxConfig });
          const { containerId } = await runtime.runtime.createContainer({ podSandboxId, config, sandboxConfig });
          await runtime.runtime.startContainer({ containerId });
          out(`${containerId}\n`);
        } catch (err) {
          // crictl leaves the sandbox behind; a sandbox nobody asked for is a leak, so it goes,
          // under its own deadline (the call that failed may have used up the first).
          await rollback(runtime.runtime, podSandboxId);
          throw err;
        }
      });
    });
}

async function rollback(rt: RuntimeService, id: string): Promise<void> {
  try {
    await rt.stopPodSandbox({ podSandboxId: id }, { timeoutMs: 30_000 });
    await rt.removePodSandbox({ podSandboxId: id }, { timeoutMs: 30_000 });
  } catch (err) {
    io.stderr.write(`nodelet: could not remove sandbox ${id} after the failure below: ${describeError(err)}; remove it with nodelet cri rmp -f ${id}\n`);
  }
}
