/** `nodelet cri stats|statsp|version|info`. */
import type { Command } from 'commander';
import { AgentError, delay } from '@nodelet/base';
import type { CriClient, ContainerStats__Output, PodSandboxStats__Output } from '@nodelet/cri-client';
import { collect, out, parseLabels, parseOutput, printStructured, withClients } from './context.js';
import { mergeInfo } from './inspect.js';
import { containerStatsTable, podStatsTable, versionText } from './tables.js';

interface StatsOptions {
  all?: boolean;
  id?: string;
  pod?: string;
  label?: string[];
  output?: string;
  seconds: string;
  watch?: boolean;
}

const CLEAR_SCREEN = '\x1b[2J\x1b[H';

function sampleSeconds(v: string): number {
  const n = Number.parseInt(v, 10);
  if (!Number.isInteger(n) || n < 1) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid --seconds "${v}": use a whole number ≥ 1`);
  return n;
}

/**
 * Table stats need two samples `seconds` apart (CPU % is a rate); JSON/YAML print one sample.
 * With --watch it repeats until interrupted.
 */
async function statsLoop<T>(
  o: StatsOptions,
  sample: () => Promise<T[]>,
  render: (cur: T[], prev: T[]) => string,
  wrap: (cur: T[]) => object,
): Promise<void> {
  const format = parseOutput(o.output);
  const seconds = sampleSeconds(o.seconds);
  do {
    if (format !== 'table') {
      printStructured(wrap(await sample()), format);
    } else {
      const prev = await sample();
      await delay(seconds * 1000);
      const cur = await sample();
      if (process.stdout.isTTY) out(CLEAR_SCREEN); // crictl clears the screen before each table
      out(render(cur, prev));
    }
    if (o.watch && format !== 'table') await delay(seconds * 1000);
  } while (o.watch);
}

/** The options `stats` and `statsp` share: label filter, output format and sampling. */
function sampleOptions(c: Command): Command {
  return c
    .option('--label <key=value>', 'filter by label (repeatable)', collect)
    .option('-o, --output <format>', 'json, yaml or table', 'table')
    .option('-s, --seconds <n>', 'sample interval in seconds', '1')
    .option('-w, --watch', 'refresh until interrupted');
}

export function registerStats(cri: Command): void {
  const stats = cri
    .command('stats')
    .description('show resource usage of containers')
    .argument('[container-id]')
    .option('-a, --all', 'include stopped containers')
    .option('--id <id>', 'filter by container ID')
    .option('-p, --pod <pod-id>', 'filter by pod sandbox ID');
  sampleOptions(stats).action(async (id: string | undefined, o: StatsOptions, cmd: Command) => {
    await withClients(cmd, async ({ runtime }: { runtime: CriClient }) => {
      const filter = { id: id ?? o.id ?? '', podSandboxId: o.pod ?? '', labelSelector: parseLabels(o.label) ?? {} };
      await statsLoop<ContainerStats__Output>(
        o,
        async () => (await runtime.runtime.listContainerStats({ filter })).stats,
        (cur, prev) => containerStatsTable(cur, prev, { all: o.all }),
        (stats) => ({ stats }),
      );
    });
  });

  const statsp = cri.command('statsp').description('show resource usage of pod sandboxes').argument('[pod-id]').option('--id <id>', 'filter by pod sandbox ID');
  sampleOptions(statsp).action(async (id: string | undefined, o: StatsOptions, cmd: Command) => {
    await withClients(cmd, async ({ runtime }) => {
      const filter = { id: id ?? o.id ?? '', labelSelector: parseLabels(o.label) ?? {} };
      await statsLoop<PodSandboxStats__Output>(
        o,
        async () => (await runtime.runtime.listPodSandboxStats({ filter })).stats,
        (cur, prev) => podStatsTable(cur, prev),
        (stats) => ({ stats }),
      );
    });
  });

  cri
    .command('version')
    .description('show the runtime name and versions')
    .option('-o, --output <format>', 'json, yaml or table', 'table')
    .action(async (o: { output?: string }, cmd: Command) => {
      const format = parseOutput(o.output);
      await withClients(cmd, async ({ runtime }) => {
        // crictl sends "v1" here; the kubelet's handshake sends "0.1.0". Runtimes answer either.
        const v = await runtime.runtime.version({ version: 'v1' });
        if (format === 'table') out(versionText(v));
        else printStructured(v, format);
      });
    });

  cri
    .command('info')
    .description('show runtime status conditions and (verbose) configuration')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('-q, --quiet', 'only the status conditions')
    .action(async (o: { output?: string; quiet?: boolean }, cmd: Command) => {
      const format = parseOutput(o.output, ['json', 'yaml']) as 'json' | 'yaml';
      await withClients(cmd, async ({ runtime }) => {
        const r = await runtime.runtime.status({ verbose: !o.quiet });
        printStructured({ status: r.status, ...mergeInfo(r.info) }, format);
      });
    });
}
