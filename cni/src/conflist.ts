import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { readdirIfExists } from '@nodelet/base';
import { CniCode, CniError } from './errors.js';
import type { NetworkConfigList, PluginConf } from './types.js';
import { candidateVersions, isValidVersion, versionAtLeast } from './version.js';

/** Network and container-ID charset of the spec. */
export const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
/** Plugin types are file names looked up in CNI_PATH: no path separators. */
const TYPE_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$/;
export const CONF_EXTENSIONS = ['.conflist', '.conf', '.json'] as const;

function invalid(source: string | undefined, field: string, problem: string): CniError {
  return new CniError({
    cniCode: CniCode.InvalidNetworkConfig,
    msg: 'invalid network config',
    details: `${source ? `${source}: ` : ''}${field}: ${problem}`,
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validatePlugin(p: unknown, field: string, source: string | undefined): PluginConf {
  if (!isObject(p)) throw invalid(source, field, 'must be an object');
  if (typeof p.type !== 'string' || p.type === '') throw invalid(source, `${field}.type`, 'is required (the plugin binary name)');
  if (!TYPE_RE.test(p.type)) throw invalid(source, `${field}.type`, `"${p.type}" is not a plain binary name`);
  if (p.capabilities !== undefined) {
    if (!isObject(p.capabilities)) throw invalid(source, `${field}.capabilities`, 'must be an object of booleans');
    for (const [k, v] of Object.entries(p.capabilities)) {
      if (typeof v !== 'boolean') throw invalid(source, `${field}.capabilities.${k}`, 'must be true or false');
    }
  }
  if (p.ipam !== undefined) {
    if (!isObject(p.ipam)) throw invalid(source, `${field}.ipam`, 'must be an object');
    if (typeof p.ipam.type !== 'string' || p.ipam.type === '') throw invalid(source, `${field}.ipam.type`, 'is required when ipam is set');
  }
  if (p.dns !== undefined && !isObject(p.dns)) throw invalid(source, `${field}.dns`, 'must be an object');
  return p as PluginConf;
}

function optionalBool(o: Record<string, unknown>, key: string, source: string | undefined): boolean {
  if (o[key] === undefined) return false;
  if (typeof o[key] !== 'boolean') throw invalid(source, key, 'must be true or false');
  return o[key] as boolean;
}

/**
 * Parses and validates a conflist (or a legacy single-plugin `.conf`, up-converted to a list as
 * libcni's LoadNetworkConf does). Errors are code 7 and name the file and the offending field.
 */
export function parseNetworkConfig(bytes: Buffer | string, source?: string): NetworkConfigList {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw invalid(source, '(document)', `malformed JSON (${(err as Error).message})`);
  }
  if (!isObject(raw)) throw invalid(source, '(document)', 'must be a JSON object');
  if (typeof raw.name !== 'string' || raw.name === '') throw invalid(source, 'name', 'is required');
  if (!NAME_RE.test(raw.name)) throw invalid(source, 'name', `"${raw.name}" must match ${NAME_RE.source}`);
  if (raw.cniVersion === undefined) throw invalid(source, 'cniVersion', 'is required');
  if (!isValidVersion(raw.cniVersion)) throw invalid(source, 'cniVersion', `${JSON.stringify(raw.cniVersion)} is not a version like "1.0.0"`);
  let cniVersions: string[] | undefined;
  if (raw.cniVersions !== undefined) {
    if (!Array.isArray(raw.cniVersions)) throw invalid(source, 'cniVersions', 'must be a list of versions');
    raw.cniVersions.forEach((v, i) => {
      if (!isValidVersion(v)) throw invalid(source, `cniVersions[${i}]`, `${JSON.stringify(v)} is not a version like "1.0.0"`);
    });
    cniVersions = raw.cniVersions as string[];
  }
  let plugins: PluginConf[];
  if (raw.plugins === undefined) {
    if (raw.type === undefined) throw invalid(source, 'plugins', 'is required (or "type" for a single-plugin .conf)');
    // Legacy single-plugin config: the whole object is the plugin, minus list-level keys.
    const { name: _n, cniVersion: _v, cniVersions: _vs, ...plugin } = raw;
    plugins = [validatePlugin(plugin, '(plugin)', source)];
  } else {
    if (!Array.isArray(raw.plugins)) throw invalid(source, 'plugins', 'must be a list');
    if (raw.plugins.length === 0) throw invalid(source, 'plugins', 'must not be empty');
    plugins = raw.plugins.map((p, i) => validatePlugin(p, `plugins[${i}]`, source));
  }
  const list: NetworkConfigList = {
    name: raw.name,
    cniVersion: raw.cniVersion,
    disableCheck: optionalBool(raw, 'disableCheck', source),
    disableGC: optionalBool(raw, 'disableGC', source),
    plugins,
    bytes: buf,
  };
  if (cniVersions) list.cniVersions = cniVersions;
  if (source) list.source = source;
  if (candidateVersions(list).length === 0) {
    throw invalid(source, 'cniVersion', `none of [${[list.cniVersion, ...(cniVersions ?? [])].join(', ')}] is supported (this engine speaks 0.1.0 … 1.1.0)`);
  }
  if (!versionAtLeast(candidateVersions(list)[0]!, '0.3.0') && plugins.length > 1) {
    throw invalid(source, 'cniVersion', 'plugin chaining needs cniVersion 0.3.0 or later');
  }
  return list;
}

/** One file of a configuration directory: the list, or why it was rejected. */
export interface ConfigFileEntry {
  file: string;
  list?: NetworkConfigList;
  error?: CniError;
}

/** Every `.conflist`/`.conf`/`.json` of `dir`, sorted by file name, parsed (for `nodelet cni ls`). */
export async function listNetworkConfigs(dir: string): Promise<ConfigFileEntry[]> {
  const names = await readdirIfExists(dir);
  const out: ConfigFileEntry[] = [];
  for (const n of names.filter((f) => (CONF_EXTENSIONS as readonly string[]).includes(extname(f))).sort()) {
    const file = join(dir, n);
    try {
      const st = await stat(file);
      if (!st.isFile()) continue;
      out.push({ file, list: parseNetworkConfig(await readFile(file), file) });
    } catch (err) {
      out.push({ file, error: err instanceof CniError ? err : invalid(file, '(file)', (err as Error).message) });
    }
  }
  return out;
}

export interface LoadNetworkConfigOptions {
  /** Pick the first list with this name (cnitool's `<net>`); default: the first valid list. */
  name?: string;
}

/**
 * Loads a list from a file, or from a directory the way libcni/go-cni do: files sorted by name,
 * invalid ones skipped, first match wins. When nothing matches, the error lists every file that
 * was rejected and why, so the operator can fix the right one.
 */
export async function loadNetworkConfig(path: string, opts: LoadNetworkConfigOptions = {}): Promise<NetworkConfigList> {
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (err) {
    throw new CniError({ cniCode: CniCode.InvalidNetworkConfig, msg: 'no network config', details: `${path}: ${(err as Error).message}`, code: 'ERR_NOT_FOUND' });
  }
  if (!isDir) {
    const list = parseNetworkConfig(await readFile(path), path);
    if (opts.name && list.name !== opts.name) throw invalid(path, 'name', `is "${list.name}", expected "${opts.name}"`);
    return list;
  }
  const entries = await listNetworkConfigs(path);
  const hit = entries.find((e) => e.list && (!opts.name || e.list.name === opts.name));
  if (hit?.list) return hit.list;
  const rejected = entries.filter((e) => e.error).map((e) => e.error!.details ?? e.error!.message);
  const want = opts.name ? `network "${opts.name}"` : 'a valid network config';
  throw new CniError({
    cniCode: CniCode.InvalidNetworkConfig,
    msg: 'no network config',
    details: `no ${want} in ${path} (${entries.length} file(s) with ${CONF_EXTENSIONS.join('/')})${rejected.length ? `; rejected: ${rejected.join('; ')}` : ''}`,
    code: 'ERR_NOT_FOUND',
  });
}
