import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeConf } from './types.js';

/** libcni's default cache root; results live in `<root>/results`. */
export const DEFAULT_CACHE_DIR = '/var/lib/cni';

/**
 * One cached attachment in libcni's `cniCacheV1` layout (libcni/api.go cachedInfo), so cnitool and
 * other libcni-based tools can read what nodelet wrote and vice versa. `config` is the base64 of
 * the conflist bytes because Go serialises []byte that way.
 */
export interface CacheEntry {
  kind: 'cniCacheV1';
  containerId: string;
  config: string;
  ifName: string;
  networkName: string;
  netns?: string;
  cniArgs?: Array<[string, string]>;
  capabilityArgs?: Record<string, unknown>;
  result?: Record<string, unknown>;
}

/** A cached attachment as callers see it. */
export interface CachedAttachment {
  networkName: string;
  containerID: string;
  ifName: string;
  netns?: string;
  cniArgs?: Array<[string, string]>;
  capabilityArgs?: Record<string, unknown>;
  /** The conflist bytes the ADD ran with (DEL must use the same configuration). */
  config?: Buffer;
  /** The final ADD result, as stored (the list's version). */
  result?: Record<string, unknown>;
  file: string;
}

/**
 * The result cache. Written after a successful ADD of the whole list, removed after a
 * successful DEL (libcni cacheAdd/cacheDel). Writes are atomic (temp file + rename) so a crash
 * never leaves half a file for the next DEL to choke on.
 */
export class ResultCache {
  readonly dir: string;

  constructor(root: string = DEFAULT_CACHE_DIR) {
    this.dir = join(root, 'results');
  }

  fileFor(network: string, containerID: string, ifName: string): string {
    return join(this.dir, `${network}-${containerID}-${ifName}`);
  }

  async write(network: string, rt: RuntimeConf, config: Buffer, result: Record<string, unknown>): Promise<void> {
    const entry: CacheEntry = { kind: 'cniCacheV1', containerId: rt.containerID, config: config.toString('base64'), ifName: rt.ifName, networkName: network };
    if (rt.netns) entry.netns = rt.netns;
    if (rt.args?.length) entry.cniArgs = rt.args;
    if (rt.capabilityArgs && Object.keys(rt.capabilityArgs).length) entry.capabilityArgs = rt.capabilityArgs;
    entry.result = result;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileFor(network, rt.containerID, rt.ifName);
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, JSON.stringify(entry), { mode: 0o600 });
    await rename(tmp, file);
  }

  /** The cached attachment, or undefined when there is none or it cannot be read (as libcni). */
  async read(network: string, containerID: string, ifName: string): Promise<CachedAttachment | undefined> {
    const file = this.fileFor(network, containerID, ifName);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return undefined;
    }
    return decode(text, file) ?? undefined;
  }

  async remove(network: string, containerID: string, ifName: string): Promise<void> {
    await rm(this.fileFor(network, containerID, ifName), { force: true });
  }

  /** Every cniCacheV1 attachment, optionally of one network (libcni GetCachedAttachments). */
  async list(network?: string): Promise<CachedAttachment[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const out: CachedAttachment[] = [];
    for (const n of names.sort()) {
      if (n.includes('.tmp-')) continue;
      if (network && !n.startsWith(`${network}-`)) continue;
      const file = join(this.dir, n);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        continue;
      }
      const a = decode(text, file);
      if (a && (!network || a.networkName === network)) out.push(a);
    }
    return out;
  }
}

function decode(text: string, file: string): CachedAttachment | undefined {
  let e: Partial<CacheEntry>;
  try {
    e = JSON.parse(text) as Partial<CacheEntry>;
  } catch {
    return undefined;
  }
  // The legacy format is a bare result without kind/ids; it cannot be attributed, so it is skipped.
  if (e.kind !== 'cniCacheV1' || typeof e.containerId !== 'string' || typeof e.ifName !== 'string' || typeof e.networkName !== 'string') return undefined;
  const a: CachedAttachment = { networkName: e.networkName, containerID: e.containerId, ifName: e.ifName, file };
  if (e.netns) a.netns = e.netns;
  if (Array.isArray(e.cniArgs)) a.cniArgs = e.cniArgs;
  if (e.capabilityArgs) a.capabilityArgs = e.capabilityArgs;
  if (typeof e.config === 'string') a.config = Buffer.from(e.config, 'base64');
  if (e.result) a.result = e.result;
  return a;
}
