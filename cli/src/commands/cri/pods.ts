/** `nodelet cri runp|stopp|rmp|pods|inspectp`. */
import type { Command } from 'commander';
import { AgentError } from '@nodelet/base';
import type { PodSandbox__Output, PodSandboxFilter } from '@nodelet/cri-client';
import { collect, forEachId, out, parseLabels, parseOutput, printStructured, withClients } from './context.js';
import { loadPodSandboxConfig } from './config-file.js';
import { registerInspect } from './inspect.js';
import { podsTable } from './tables.js';

interface PodsOptions {
  id?: string;
  name?: string;
  namespace?: string;
  state?: string;
  label?: string[];
  verbose?: boolean;
  quiet?: boolean;
  output?: string;
  latest?: boolean;
  last?: string;
  /** commander's `--no-trunc` sets trunc=false. */
  trunc?: boolean;
}

function stateFilter(state: string | undefined): PodSandboxFilter['state'] {
  if (!state) return undefined;
  const s = state.toLowerCase();
  if (s === 'ready' || s === 'sandbox_ready') return { state: 'SANDBOX_READY' };
  if (s === 'notready' || s === 'sandbox_notready') return { state: 'SANDBOX_NOTREADY' };
  throw new AgentError('ERR_INVALID_ARGUMENT', `invalid pod state "${state}": use ready or notready`);
}

/** crictl's client-side filters and ordering (newest first), then -l / -n. */
export function selectPods(items: PodSandbox__Output[], o: PodsOptions): PodSandbox__Output[] {
  const name = o.name ? new RegExp(o.name) : undefined;
  const ns = o.namespace ? new RegExp(o.namespace) : undefined;
  let pods = items
    .filter((p) => !name || name.test(p.metadata?.name ?? ''))
    .filter((p) => !ns || ns.test(p.metadata?.namespace ?? ''))
    .sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : BigInt(b.createdAt) < BigInt(a.createdAt) ? -1 : 0));
  const last = o.latest ? 1 : o.last ? Number.parseInt(o.last, 10) : 0;
  if (last > 0) pods = pods.slice(0, last);
  return pods;
}

function verboseText(p: PodSandbox__Output): string {
  const lines = [
    `ID: ${p.id}`,
    `Name: ${p.metadata?.name ?? ''}`,
    `UID: ${p.metadata?.uid ?? ''}`,
    `Namespace: ${p.metadata?.namespace ?? ''}`,
    `Attempt: ${p.metadata?.attempt ?? 0}`,
    `Status: ${p.state === 'SANDBOX_READY' ? 'Ready' : 'NotReady'}`,
    `Created: ${new Date(Number(BigInt(p.createdAt) / 1_000_000n)).toISOString()}`,
  ];
  if (Object.keys(p.labels).length) lines.push('Labels:', ...Object.keys(p.labels).sort().map((k) => `\t${k} -> ${p.labels[k]}`));
  if (Object.keys(p.annotations).length) lines.push('Annotations:', ...Object.keys(p.annotations).sort().map((k) => `\t${k} -> ${p.annotations[k]}`));
  return `${lines.join('\n')}\n\n`;
}

export function registerPods(cri: Command): void {
  cri
    .command('runp')
    .description('run a new pod sandbox from a JSON/YAML PodSandboxConfig file')
    .argument('<pod-config>', 'pod sandbox config file (JSON or YAML)')
    .option('-r, --runtime <handler>', 'runtime handler (RuntimeClass) to use')
    .action(async (file: string, o: { runtime?: string }, cmd: Command) => {
      const config = await loadPodSandboxConfig(file);
      await withClients(cmd, async ({ runtime }) => {
        const { podSandboxId } = await runtime.runtime.runPodSandbox({ config, runtimeHandler: o.runtime ?? '' });
        out(`${podSandboxId}\n`);
      });
    });

  cri
    .command('stopp')
    .description('stop one or more pod sandboxes (their containers are killed)')
    .argument('<pod-id...>')
    .action(
      forEachId(async ({ runtime }, id) => {
        await runtime.runtime.stopPodSandbox({ podSandboxId: id });
        return `Stopped sandbox ${id}\n`;
      }),
    );

  cri
    .command('rmp')
    .description('remove one or more pod sandboxes')
    .argument('[pod-id...]')
    .option('-f, --force', 'stop the sandbox before removing it')
    .option('-a, --all', 'remove all pod sandboxes')
    .action(async (ids: string[], o: { force?: boolean; all?: boolean }, cmd: Command) => {
      await withClients(cmd, async ({ runtime }) => {
        const targets = o.all ? (await runtime.runtime.listPodSandbox({})).items.map((p) => p.id) : ids;
        if (!targets.length && !o.all) throw new AgentError('ERR_INVALID_ARGUMENT', 'give at least one pod sandbox ID, or -a/--all');
        for (const id of targets) {
          if (o.force) await runtime.runtime.stopPodSandbox({ podSandboxId: id });
          await runtime.runtime.removePodSandbox({ podSandboxId: id });
          out(`Removed sandbox ${id}\n`);
        }
      });
    });

  cri
    .command('pods')
    .description('list pod sandboxes')
    .option('--id <id>', 'filter by pod sandbox ID (prefix)')
    .option('--name <regex>', 'filter by pod name (regular expression)')
    .option('--namespace <regex>', 'filter by pod namespace (regular expression)')
    .option('-s, --state <state>', 'filter by state: ready, notready')
    .option('--label <key=value>', 'filter by label (repeatable)', collect)
    .option('-v, --verbose', 'show details of each pod')
    .option('-q, --quiet', 'only print pod sandbox IDs')
    .option('-o, --output <format>', 'json, yaml or table', 'table')
    .option('-l, --latest', 'only the most recently created pod')
    .option('-n, --last <n>', 'only the n most recently created pods')
    .option('--no-trunc', 'do not truncate IDs')
    .action(async (o: PodsOptions, cmd: Command) => {
      const format = parseOutput(o.output);
      await withClients(cmd, async ({ runtime }) => {
        const filter: PodSandboxFilter = { id: o.id ?? '', state: stateFilter(o.state) ?? null, labelSelector: parseLabels(o.label) ?? {} };
        const pods = selectPods((await runtime.runtime.listPodSandbox({ filter })).items, o);
        if (o.quiet) return out(pods.map((p) => `${p.id}\n`).join(''));
        if (format !== 'table') return printStructured({ items: pods }, format);
        if (o.verbose) return out(pods.map(verboseText).join(''));
        out(podsTable(pods, { nowMs: Date.now(), noTrunc: o.trunc === false }));
      });
    });

  registerInspect(cri, {
    name: 'inspectp',
    description: 'show the status of one or more pod sandboxes',
    argument: '<pod-id...>',
    status: async ({ runtime }, id, verbose) => {
      const r = await runtime.runtime.podSandboxStatus({ podSandboxId: id, verbose });
      return { status: r.status, info: r.info };
    },
    row: (s) => podsTable([{ ...s!, labels: s!.labels, annotations: s!.annotations }], { nowMs: Date.now() }),
  });
}
