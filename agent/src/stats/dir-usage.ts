/**
 * Disk usage of a directory tree (volumes, container log directories), as kubelet's `du -x -s -B 1`
 * and `find -xdev` measure it: allocated blocks, one count per inode (hard links once), without
 * following symlinks or crossing into another filesystem (bind mounts inside a volume).
 *
 * Walking is bounded (`maxEntries`) so a volume with millions of files costs a fixed amount per
 * walk, and {@link DirUsageCache} walks each directory at most once per `ttlMs` (kubelet's
 * volumeStatsAggPeriod, 1 min), one walk at a time, off the request path: a caller always gets
 * the last result at once.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Logger } from '@nodelet/base';
import { describeError } from '@nodelet/base';

export interface DirUsage {
  usedBytes: number;
  inodesUsed: number;
  /** False when the walk stopped at `maxEntries`: the numbers are a lower bound. */
  complete: boolean;
}

export interface DirUsageOptions {
  maxEntries?: number;
  signal?: AbortSignal;
}

const DEFAULT_MAX_ENTRIES = 100_000;

/** Walks `dir` (breadth first). A missing `dir` is zero usage; entries that vanish mid-walk are skipped. */
export async function dirUsage(dir: string, o: DirUsageOptions = {}): Promise<DirUsage> {
  const max = o.maxEntries ?? DEFAULT_MAX_ENTRIES;
  let root;
  try {
    root = await lstat(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { usedBytes: 0, inodesUsed: 0, complete: true };
    throw err;
  }
  const seen = new Set<number>([root.ino]);
  let usedBytes = root.blocks * 512;
  let entries = 1;
  const queue = root.isDirectory() ? [dir] : [];
  while (queue.length) {
    o.signal?.throwIfAborted();
    const d = queue.shift()!;
    let names: string[];
    try {
      names = await readdir(d);
    } catch {
      // Removed or unreadable since it was listed: it holds nothing we can count.
      continue;
    }
    for (const name of names) {
      if (entries >= max) return { usedBytes, inodesUsed: seen.size, complete: false };
      const p = join(d, name);
      const st = await lstat(p).catch(() => undefined); // removed while walking: not counted
      entries++;
      if (!st || st.dev !== root.dev || seen.has(st.ino)) continue;
      seen.add(st.ino);
      usedBytes += st.blocks * 512;
      if (st.isDirectory()) queue.push(p);
    }
  }
  return { usedBytes, inodesUsed: seen.size, complete: true };
}

export interface DirUsageCacheOptions {
  clock: Clock;
  log: Logger;
  /** How old a result may be before it is walked again (default 60 s). */
  ttlMs?: number;
  maxEntries?: number;
  /** The walker (tests inject one). */
  walk?: (dir: string, o: DirUsageOptions) => Promise<DirUsage>;
}

/**
 * The last usage of each directory asked for, refreshed in the background. `get` never waits
 * for a walk: it returns the cached value (undefined before the first walk finished) and queues
 * a refresh when the value is older than the TTL. `retain` forgets directories no longer asked
 * for (a removed pod's volumes).
 */
export class DirUsageCache {
  readonly #o: Required<Omit<DirUsageCacheOptions, 'walk'>> & Pick<DirUsageCacheOptions, 'walk'>;
  readonly #entries = new Map<string, { usage?: DirUsage; at: number; queued: boolean }>();
  readonly #queue: string[] = [];
  #running?: Promise<void>;
  #stop = new AbortController();

  constructor(o: DirUsageCacheOptions) {
    this.#o = { ttlMs: 60_000, maxEntries: DEFAULT_MAX_ENTRIES, ...o };
  }

  get(dir: string): DirUsage | undefined {
    let e = this.#entries.get(dir);
    if (!e) this.#entries.set(dir, (e = { at: -Infinity, queued: false }));
    if (!e.queued && this.#o.clock.monotonic() - e.at >= this.#o.ttlMs) {
      e.queued = true;
      this.#queue.push(dir);
      this.#running ??= this.#drain().finally(() => (this.#running = undefined));
    }
    return e.usage;
  }

  /** Keeps only `dirs`. */
  retain(dirs: ReadonlySet<string>): void {
    for (const k of this.#entries.keys()) if (!dirs.has(k)) this.#entries.delete(k);
  }

  /** Resolves when every queued walk is done (tests, and a first summary that wants numbers). */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops walking; idempotent. */
  close(): void {
    this.#stop.abort();
    this.#queue.length = 0;
  }

  async #drain(): Promise<void> {
    const walk = this.#o.walk ?? dirUsage;
    while (this.#queue.length && !this.#stop.signal.aborted) {
      const dir = this.#queue.shift()!;
      const e = this.#entries.get(dir);
      if (!e) continue;
      try {
        e.usage = await walk(dir, { maxEntries: this.#o.maxEntries, signal: this.#stop.signal });
      } catch (err) {
        if (!this.#stop.signal.aborted) this.#o.log.debug({ dir, err: describeError(err) }, 'Directory usage walk failed');
      }
      e.at = this.#o.clock.monotonic();
      e.queued = false;
    }
  }
}
