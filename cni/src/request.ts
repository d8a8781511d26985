import { NAME_RE } from './conflist.js';
import { CniCode, CniError } from './errors.js';
import type { CniResult, NetworkConfigList, PluginConf, RuntimeConf } from './types.js';
import { convertResult } from './version.js';

export type Command = 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS';

/** A plugin of a list, located in CNI_PATH, with the version negotiated for it. */
export interface PreparedPlugin {
  conf: PluginConf;
  path: string;
  version: string;
}

/** CNI_IFNAME rules of cni pkg/utils: 1–15 chars, not . or .., no / : or whitespace. */
export function validIfName(name: string): boolean {
  return name.length > 0 && name.length <= 15 && name !== '.' && name !== '..' && !/[/:\s]/.test(name);
}

/** Rejects bad parameters before any plugin runs (spec code 4, invalid environment). */
export function validateRuntimeConf(rt: RuntimeConf, command: Command): void {
  const bad = (msg: string, details: string): CniError => new CniError({ cniCode: CniCode.InvalidEnvironment, msg, details });
  if (!NAME_RE.test(rt.containerID)) throw bad('invalid container ID', `${JSON.stringify(rt.containerID)} must match ${NAME_RE.source}`);
  if (!validIfName(rt.ifName)) throw bad('invalid interface name', `${JSON.stringify(rt.ifName)}: 1-15 characters, no "/", ":" or whitespace`);
  if ((command === 'ADD' || command === 'CHECK') && !rt.netns) throw bad('netns is required', `${command} needs the network namespace path (CNI_NETNS)`);
  for (const [k, v] of rt.args ?? []) {
    if (!k || /[=;]/.test(k) || /;/.test(v)) throw bad('invalid CNI_ARGS', `${JSON.stringify(`${k}=${v}`)}: keys and values must not contain ";" (or "=" in keys)`);
  }
}

/** The six CNI_* variables, always all set (empty when unset), as libcni's invoke.Args does. */
export function buildEnv(command: Command, rt: RuntimeConf, binDirs: readonly string[]): Record<string, string> {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: rt.containerID,
    CNI_NETNS: rt.netns ?? '',
    CNI_IFNAME: rt.ifName,
    CNI_ARGS: (rt.args ?? []).map(([k, v]) => `${k}=${v}`).join(';'),
    CNI_PATH: binDirs.join(':'),
  };
}

/**
 * The request a plugin reads on stdin (SPEC.md "Deriving request configuration"): the plugin
 * object with the list's name and the negotiated cniVersion, `runtimeConfig` holding only the
 * capabilities the plugin declares and the caller supplies, `capabilities` itself stripped, and
 * `prevResult` converted to the plugin's version.
 */
export function buildRequest(list: NetworkConfigList, p: PreparedPlugin, rt: RuntimeConf, prev: CniResult | undefined, extra?: Record<string, unknown>): Buffer {
  const { capabilities, ...rest } = p.conf;
  const req: Record<string, unknown> = { cniVersion: p.version, name: list.name, ...rest };
  req.cniVersion = p.version;
  req.name = list.name;
  const runtimeConfig: Record<string, unknown> = {};
  for (const [cap, declared] of Object.entries(capabilities ?? {})) {
    if (declared && rt.capabilityArgs && rt.capabilityArgs[cap] !== undefined) runtimeConfig[cap] = rt.capabilityArgs[cap];
  }
  if (Object.keys(runtimeConfig).length > 0) req.runtimeConfig = runtimeConfig;
  if (prev) req.prevResult = convertResult(prev, p.version);
  if (extra) Object.assign(req, extra);
  return Buffer.from(JSON.stringify(req));
}

/** Parses `K=V;K2=V2` (CNI_ARGS) into pairs. */
export function parseCniArgs(s: string | undefined): Array<[string, string]> {
  if (!s) return [];
  return s
    .split(';')
    .filter((kv) => kv !== '')
    .map((kv) => {
      const i = kv.indexOf('=');
      if (i <= 0) throw new CniError({ cniCode: CniCode.InvalidEnvironment, msg: 'invalid CNI_ARGS', details: `${JSON.stringify(kv)} is not KEY=VALUE` });
      return [kv.slice(0, i), kv.slice(i + 1)] as [string, string];
    });
}
