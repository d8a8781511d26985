/** `inspect`, `inspectp`, `inspecti` and `info` share crictl's merge of status and verbose info. */
import type { Command } from 'commander';
import { out, parseOutput, printStructured, withClients, type Clients } from './context.js';

/** Each info value that is a JSON object is embedded parsed; other values stay strings. */
export function mergeInfo(info: Record<string, string> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(info ?? {})) {
    if (v.startsWith('{')) {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // not JSON after all: keep the string
      }
    }
    out[k] = v;
  }
  return out;
}

/** `{ status, info }` as crictl prints it; `info` only when present. */
export function statusDocument(status: unknown, info: Record<string, string> | undefined): Record<string, unknown> {
  const merged = mergeInfo(info);
  return Object.keys(merged).length ? { status, info: merged } : { status };
}

export interface InspectCommand<S> {
  name: string;
  description: string;
  /** The argument of the IDs or references, e.g. `<container-id...>`. */
  argument: string;
  /** The status of one object (with the runtime's verbose info when `verbose`). */
  status(c: Clients, id: string, verbose: boolean): Promise<{ status: S; info: Record<string, string> }>;
  /** The object as a row of its listing's table (`-o table`). */
  row(status: S, info: Record<string, string>): string;
}

/**
 * Registers `inspect`, `inspectp` or `inspecti`: the status of each named object in turn, as
 * crictl prints it — JSON or YAML with the verbose info unless `-q`, or the listing's table row.
 */
export function registerInspect<S>(cri: Command, i: InspectCommand<S>): void {
  cri
    .command(i.name)
    .description(i.description)
    .argument(i.argument)
    .option('-o, --output <format>', 'json, yaml or table', 'json')
    .option('-q, --quiet', 'only the status, without verbose info')
    .action(async (ids: string[], o: { output?: string; quiet?: boolean }, cmd: Command) => {
      const format = parseOutput(o.output);
      await withClients(cmd, async (c) => {
        for (const id of ids) {
          const { status, info } = await i.status(c, id, !o.quiet);
          if (format === 'table') out(i.row(status, info));
          else printStructured(statusDocument(status, info), format);
        }
      });
    });
}
