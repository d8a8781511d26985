/**
 * The shape every one-shot `nodelet <command>` entry of the control plane shares (`nodelet etcd`,
 * `nodelet snapshot`): parse the flags strictly, print the usage for --help or no command (exit 2
 * without --help), run, and turn a failure into one line on stderr: exit 2 for a usage error, 1
 * for anything else.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { describeError } from '@nodelet/base';

/** A mistake in how the command was called: exit status 2 and the usage's spirit. */
export class UsageError extends Error {}

/** Parses `argv` (which may start with `command`) against `options` and runs `run`. */
export async function subcommandMain<O extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  usage: string,
  options: O,
  argv: string[],
  run: (positionals: string[], values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>['values']) => Promise<void>,
): Promise<void> {
  const args = argv[0] === command ? argv.slice(1) : argv;
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`nodelet ${command}: ${(err as Error).message}\n${usage}`);
    process.exitCode = 2;
    return;
  }
  const { values, positionals } = parsed;
  if ((values as { help?: boolean }).help || positionals.length === 0) {
    process.stdout.write(usage);
    if (!(values as { help?: boolean }).help) process.exitCode = 2;
    return;
  }
  try {
    await run(positionals, values);
  } catch (err) {
    process.stderr.write(`nodelet ${command}: ${describeError(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  }
}
