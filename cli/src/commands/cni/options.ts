import { createHash } from 'node:crypto';
import { CniCode, CniError, DEFAULT_CACHE_DIR, parseCniArgs, type RuntimeConf } from '@nodelet/cni';
import { parseDuration } from '@nodelet/base';

/** Flags shared by every `nodelet cni` subcommand; defaults come from cnitool's environment. */
export interface CniFlags {
  confDir: string;
  binDir: string;
  cacheDir: string;
  ifname: string;
  containerId?: string;
  timeout: string;
  output?: string;
}

export const DEFAULT_CONF_DIR = '/etc/cni/net.d';
export const DEFAULT_BIN_DIRS = '/opt/cni/bin:/usr/lib/cni';

export const defaults = {
  confDir: process.env.NETCONFPATH || DEFAULT_CONF_DIR,
  binDir: process.env.CNI_PATH || DEFAULT_BIN_DIRS,
  cacheDir: process.env.CNI_CACHE_DIR || DEFAULT_CACHE_DIR,
  ifname: process.env.CNI_IFNAME || 'eth0',
};

export function binDirs(flags: CniFlags): string[] {
  return flags.binDir.split(':').filter(Boolean);
}

/** `/run/netns/<name>` for a bare name, the path itself otherwise ("" or "-" = none, for DEL). */
export function netnsPath(arg: string | undefined): string | undefined {
  if (!arg || arg === '-') return undefined;
  return arg.includes('/') ? arg : `/run/netns/${arg}`;
}

/**
 * The attachment's parameters as cnitool builds them: container ID from CNI_CONTAINERID or
 * derived from the netns path, CNI_ARGS, and CAP_ARGS (JSON) as capability args.
 */
export function runtimeConf(flags: CniFlags, netns: string | undefined): RuntimeConf {
  const containerID = flags.containerId || process.env.CNI_CONTAINERID || `nodelet-${createHash('sha512').update(netns ?? '').digest('hex').slice(0, 20)}`;
  const rt: RuntimeConf = { containerID, ifName: flags.ifname, args: parseCniArgs(process.env.CNI_ARGS) };
  if (netns) rt.netns = netns;
  if (process.env.CAP_ARGS) {
    try {
      rt.capabilityArgs = JSON.parse(process.env.CAP_ARGS) as Record<string, unknown>;
    } catch (err) {
      throw new CniError({ cniCode: CniCode.InvalidEnvironment, msg: 'invalid CAP_ARGS', details: `must be a JSON object: ${(err as Error).message}` });
    }
  }
  return rt;
}

/** Milliseconds from a Go duration ("30s", "2m", "500ms") or, as this flag has always taken, a number of seconds. */
export function parseTimeout(s: string): number {
  try {
    return parseDuration(s, { bare: 'seconds' });
  } catch (err) {
    throw new CniError({ cniCode: CniCode.InvalidEnvironment, msg: 'invalid --timeout', details: `"${s}": use e.g. 30s, 2m or 500ms`, cause: err });
  }
}
