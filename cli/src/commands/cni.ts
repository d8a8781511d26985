/**
 * `nodelet cni …`: a cnitool-comparable front end to @nodelet/cni, for debugging a node's pod
 * network by hand. `add|del|check <net> <netns>`, `status <net>`, `gc <net>`, `version [net]`,
 * `ls`. Environment as cnitool: NETCONFPATH, CNI_PATH, CNI_IFNAME, CNI_ARGS, CAP_ARGS (JSON),
 * CNI_CONTAINERID. Results are JSON on stdout; failures print the spec error JSON on stdout and
 * exit 1.
 */
import type { Command } from 'commander';
import { CniEngine, convertResult, loadNetworkConfig, SUPPORTED_VERSIONS, skipKnownBrokenCheck, toSpecError, candidateVersions, type NetworkConfigList } from '@nodelet/cni';
import { binDirs, defaults, netnsPath, parseTimeout, runtimeConf, type CniFlags } from './cni/options.js';
import { listCommand } from './cni/ls.js';

const print = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

function engineFor(flags: CniFlags): CniEngine {
  // Same CHECK exception as the node's service: portmap ≤ 1.2 fails CHECK on IPv4-only pods (plugins#819).
  return new CniEngine({ binDirs: binDirs(flags), cacheDir: flags.cacheDir, execTimeoutMs: parseTimeout(flags.timeout), skipCheck: skipKnownBrokenCheck });
}

/** Runs a subcommand; any failure becomes spec error JSON and exit status 1. */
function run(fn: (flags: CniFlags, ...args: string[]) => Promise<void>) {
  return async (...argv: unknown[]): Promise<void> => {
    const cmd = argv[argv.length - 1] as Command;
    const flags = cmd.optsWithGlobals<CniFlags>();
    const positional = argv.slice(0, -2).filter((a): a is string => typeof a === 'string' || a === undefined) as string[];
    const ac = new AbortController();
    const onSignal = (): void => ac.abort();
    process.once('SIGINT', onSignal);
    try {
      await fn(flags, ...positional);
    } catch (err) {
      print(toSpecError(err));
      process.exitCode = 1;
    } finally {
      process.off('SIGINT', onSignal);
    }
  };
}

async function load(flags: CniFlags, net: string): Promise<NetworkConfigList> {
  return loadNetworkConfig(flags.confDir, { name: net });
}

export function register(program: Command): void {
  const cni = program
    .command('cni')
    .description('run CNI network configurations by hand, like cnitool (add|del|check|status|gc|version|ls)')
    .option('--conf-dir <dir>', 'network configuration directory or file (env NETCONFPATH)', defaults.confDir)
    .option('--bin-dir <dirs>', 'plugin directories, ":"-separated (env CNI_PATH)', defaults.binDir)
    .option('--cache-dir <dir>', 'libcni cache root; results in <dir>/results (env CNI_CACHE_DIR)', defaults.cacheDir)
    .option('--ifname <name>', 'interface name inside the netns (env CNI_IFNAME)', defaults.ifname)
    .option('--container-id <id>', 'container ID (env CNI_CONTAINERID; default derived from the netns path)')
    .option('--timeout <duration>', 'per-plugin timeout; the plugin is killed after it', '60s');

  cni
    .command('add <net> <netns>')
    .description('ADD: attach the netns (path, or a name under /run/netns) to network <net>; prints the result')
    .action(
      run(async (flags, net, ns) => {
        const list = await load(flags, net!);
        const netns = netnsPath(ns);
        const result = await engineFor(flags).add(list, runtimeConf(flags, netns));
        print(convertResult(result, candidateVersions(list)[0]!));
      }),
    );

  // DEL and CHECK act on the attachment of <netns> to <net> with its cached result.
  const onAttachment = (op: 'del' | 'check') => run(async (flags, net, ns) => engineFor(flags)[op](await load(flags, net!), runtimeConf(flags, netnsPath(ns))));
  cni.command('del <net> [netns]').description('DEL: detach the netns from <net> (uses the cached result; netns may be omitted)').action(onAttachment('del'));
  cni.command('check <net> <netns>').description('CHECK: verify the attachment against its cached ADD result').action(onAttachment('check'));

  cni
    .command('status <net>')
    .description('STATUS: whether every plugin of <net> is found and ready (STATUS itself only for 1.1.0 plugins)')
    .action(
      run(async (flags, net) => {
        print(await engineFor(flags).status(await load(flags, net!)));
      }),
    );

  cni
    .command('gc <net>')
    .description('GC: delete cached attachments of <net> except those kept, then plugin GC (1.1.0 plugins)')
    .option('--keep <containerID[/ifname]...>', 'attachments that are still valid')
    .action(
      run(async (flags, net) => {
        const keep = ((flags as CniFlags & { keep?: string[] }).keep ?? []).map((k) => {
          const [containerID, ifName] = k.split('/');
          return { containerID: containerID!, ifName: ifName || flags.ifname };
        });
        const report = await engineFor(flags).gc(await load(flags, net!), { validAttachments: keep });
        print({ deleted: report.deleted, errors: report.errors.map((e) => toSpecError(e)) });
        if (report.errors.length) process.exitCode = 1;
      }),
    );

  cni
    .command('version [net]')
    .description("the engine's CNI versions, or each plugin of [net]: its supported versions and the negotiated one")
    .action(
      run(async (flags, net) => {
        if (!net) return print({ cniVersion: SUPPORTED_VERSIONS.at(-1), supportedVersions: SUPPORTED_VERSIONS });
        print(await engineFor(flags).versions(await load(flags, net)));
      }),
    );

  cni
    .command('ls')
    .description('configured networks (files of --conf-dir) and cached attachments (--cache-dir)')
    .option('-o, --output <format>', 'table or json', 'table')
    .action(run(async (flags) => listCommand(flags, engineFor(flags))));
}
