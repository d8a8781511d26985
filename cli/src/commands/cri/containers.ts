/** `nodelet cri create|start|stop|rm|ps|inspect`. */
import type { Command } from 'commander';
import { AgentError, hasCode } from '@nodelet/base';
import type { Container__Output, ContainerFilter } from '@nodelet/cri-client';
import { collect, forEachId, out, parseLabels, parseOutput, printStructured, withClients } from './context.js';
import { loadContainerConfig, loadPodSandboxConfig } from './config-file.js';
import { registerInspect } from './inspect.js';
import { containersTable } from './tables.js';

interface PsOptions {
  all?: boolean;
  id?: string;
  name?: string;
  pod?: string;
  image?: string;
  state?: string;
  label?: string[];
  quiet?: boolean;
  output?: string;
  latest?: boolean;
  last?: string;
  trunc?: boolean;
  resolveImagePath?: boolean;
}

const STATES: Record<string, ContainerFilter['state']> = {
  created: { state: 'CONTAINER_CREATED' },
  running: { state: 'CONTAINER_RUNNING' },
  exited: { state: 'CONTAINER_EXITED' },
  unknown: { state: 'CONTAINER_UNKNOWN' },
};

/** crictl: running only by default; `-a` or `--state` widen it. */
export function containerFilter(o: PsOptions): ContainerFilter {
  let state: ContainerFilter['state'] = null;
  if (o.state) {
    state = STATES[o.state.toLowerCase().replace(/^container_/, '')] ?? null;
    if (!state) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid container state "${o.state}": use created, running, exited or unknown`);
  } else if (!o.all) {
    state = STATES['running'] ?? null;
  }
  return { id: o.id ?? '', podSandboxId: o.pod ?? '', state, labelSelector: parseLabels(o.label) ?? {} };
}

/** `imageId`: the ID `--image` resolved to (crictl asks ImageStatus), matched against imageRef. */
export function selectContainers(items: Container__Output[], o: PsOptions, imageId?: string): Container__Output[] {
  const name = o.name ? new RegExp(o.name) : undefined;
  let cs = items
    .filter((c) => !name || name.test(c.metadata?.name ?? ''))
    .filter((c) => !o.image || c.image?.image === o.image || (imageId !== undefined && (c.imageRef === imageId || c.image?.image === imageId)))
    .sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : BigInt(b.createdAt) < BigInt(a.createdAt) ? -1 : 0));
  const last = o.latest ? 1 : o.last ? Number.parseInt(o.last, 10) : 0;
  if (last > 0) cs = cs.slice(0, last);
  return cs;
}

export function registerContainers(cri: Command): void {
  cri
    .command('create')
    .description('create a container in a pod sandbox from JSON/YAML configs')
    .argument('<pod-id>')
    .argument('<container-config>', 'ContainerConfig file (JSON or YAML)')
    .argument('<pod-config>', 'the PodSandboxConfig the sandbox was created with')
    .option('--with-pull', 'pull the image first if it is not present')
    .action(async (podId: string, ctrFile: string, podFile: string, o: { withPull?: boolean }, cmd: Command) => {
      const config = await loadContainerConfig(ctrFile);
      const sandboxConfig = await loadPodSandboxConfig(podFile);
      await withClients(cmd, async ({ runtime, image }) => {
        if (o.withPull) {
          const st = await image.image.imageStatus({ image: config.image ?? {} });
          if (!st.image) await image.image.pullImage({ image: config.image ?? {}, sandboxConfig });
        }
        const { containerId } = await runtime.runtime.createContainer({ podSandboxId: podId, config, sandboxConfig });
        out(`${containerId}\n`);
      });
    });

  cri
    .command('start')
    .description('start one or more created containers')
    .argument('<container-id...>')
    .action(
      forEachId(async ({ runtime }, id) => {
        await runtime.runtime.startContainer({ containerId: id });
        return `${id}\n`;
      }),
    );

  cri
    .command('stop')
    .description('stop one or more running containers')
    .argument('<container-id...>')
    .option('-t, --timeout <seconds>', 'grace period before the runtime kills the container', '0')
    .action(async (ids: string[], o: { timeout: string }, cmd: Command) => {
      const grace = Number.parseInt(o.timeout, 10);
      if (!Number.isInteger(grace) || grace < 0) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid --timeout "${o.timeout}": use whole seconds`);
      await withClients(cmd, async ({ runtime, endpoints }) => {
        for (const id of ids) {
          // The RPC must outlive the grace period it asks for.
          await runtime.runtime.stopContainer({ containerId: id, timeout: String(grace) }, { timeoutMs: endpoints.timeoutMs + grace * 1000 });
          out(`${id}\n`);
        }
      });
    });

  cri
    .command('rm')
    .description('remove one or more containers')
    .argument('[container-id...]')
    .option('-f, --force', 'stop running containers first')
    .option('-a, --all', 'remove all containers')
    .action(async (ids: string[], o: { force?: boolean; all?: boolean }, cmd: Command) => {
      await withClients(cmd, async ({ runtime }) => {
        const targets = o.all ? (await runtime.runtime.listContainers({})).containers.map((c) => c.id) : ids;
        if (!targets.length && !o.all) throw new AgentError('ERR_INVALID_ARGUMENT', 'give at least one container ID, or -a/--all');
        for (const id of targets) {
          if (o.force) {
            await runtime.runtime.stopContainer({ containerId: id, timeout: '0' }).catch((err: unknown) => {
              if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
            });
          } else {
            const st = await runtime.runtime.containerStatus({ containerId: id });
            if (st.status?.state === 'CONTAINER_RUNNING') {
              throw new AgentError('ERR_FAILED_PRECONDITION', `container "${id}" is running: stop it first (nodelet cri stop ${id}) or use rm -f`);
            }
          }
          await runtime.runtime.removeContainer({ containerId: id });
          out(`${id}\n`);
        }
      });
    });

  cri
    .command('ps')
    .description('list containers (running ones unless -a or --state)')
    .option('-a, --all', 'show all containers')
    .option('--id <id>', 'filter by container ID (prefix)')
    .option('--name <regex>', 'filter by container name (regular expression)')
    .option('-p, --pod <pod-id>', 'filter by pod sandbox ID')
    .option('--image <image>', 'filter by image reference or ID')
    .option('-s, --state <state>', 'filter by state: created, running, exited, unknown')
    .option('--label <key=value>', 'filter by label (repeatable)', collect)
    .option('-q, --quiet', 'only print container IDs')
    .option('-o, --output <format>', 'json, yaml or table', 'table')
    .option('-l, --latest', 'only the most recently created container')
    .option('-n, --last <n>', 'only the n most recently created containers')
    .option('--no-trunc', 'do not truncate IDs')
    .option('-r, --resolve-image-path', 'show the image reference instead of the image ID where the runtime reports an ID')
    .action(async (o: PsOptions, cmd: Command) => {
      const format = parseOutput(o.output);
      await withClients(cmd, async ({ runtime, image }) => {
        const imageId = o.image ? ((await image.image.imageStatus({ image: { image: o.image } })).image?.id ?? undefined) : undefined;
        const cs = selectContainers((await runtime.runtime.listContainers({ filter: containerFilter(o) })).containers, o, imageId);
        if (o.quiet) return out(cs.map((c) => `${c.id}\n`).join(''));
        if (format !== 'table') return printStructured({ containers: cs }, format);
        let resolvedImages: Map<string, string> | undefined;
        if (o.resolveImagePath) {
          resolvedImages = new Map();
          for (const img of (await image.image.listImages({})).images) if (img.repoTags[0]) resolvedImages.set(img.id, img.repoTags[0]);
        }
        out(containersTable(cs, { nowMs: Date.now(), noTrunc: o.trunc === false, resolvedImages }));
      });
    });

  registerInspect(cri, {
    name: 'inspect',
    description: 'show the status of one or more containers',
    argument: '<container-id...>',
    status: async ({ runtime }, id, verbose) => {
      const r = await runtime.runtime.containerStatus({ containerId: id, verbose });
      return { status: r.status!, info: r.info };
    },
    row: (s, info) =>
      containersTable([{ id: s.id, podSandboxId: JSON.parse(info['info'] ?? '{}').sandboxID ?? '', metadata: s.metadata, image: s.image, imageRef: s.imageRef, state: s.state, createdAt: s.createdAt, labels: s.labels, annotations: s.annotations }], { nowMs: Date.now() }),
  });
}
