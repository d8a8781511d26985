/**
 * Container log rotation (kubelet pkg/kubelet/logs/container_log_manager.go). Every
 * `containerLogMonitorInterval` (10 s) each running container's log file is looked at; one that
 * reached `containerLogMaxSize` is rotated in four steps:
 *
 *   1 clean up   leftovers of an interrupted pass: `*.tmp`, and `X` when `X.gz` exists
 *   2 trim       rotated files beyond maxFiles − 2 go, oldest first (with the current file and
 *                the one about to be rotated that makes maxFiles)
 *   3 compress   every rotated file but the newest → `X.gz` (through `X.gz.tmp`, then rename)
 *   4 rotate     rename `N.log` → `N.log.<yyyymmdd-hhmmss>`, then CRI ReopenContainerLog makes the
 *                runtime write a new `N.log`; if that fails the rename is undone (next pass retries)
 *
 * Only running containers are rotated (the runtime can reopen only their logs), so an exited
 * container's `N.log` stays whole for `kubectl logs --previous`. The newest rotated file stays
 * uncompressed so that readers (tail across rotation, `-f`) can still use it.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { RuntimeService } from '../kubecontainer/cri.js';

export interface LogRotationPolicy {
  /** Rotate when the current file reaches this many bytes (kubelet default 10Mi). */
  maxSizeBytes: number;
  /** Files per container including the current one (kubelet default 5, at least 2). */
  maxFiles: number;
}

export interface ContainerLogManagerOptions {
  runtime: Pick<RuntimeService, 'reopenContainerLog'>;
  /** The running containers and their log files (the PLEG's view). */
  running(): Iterable<{ id: string; logPath?: string }>;
  policy: LogRotationPolicy;
  clock: Clock;
  log: Logger;
  /** Default 10 s (kubelet's containerLogMonitorInterval). */
  periodMs?: number;
}

const COMPRESSED = '.gz';
const TMP = '.tmp';
const RUN_TIMEOUT_MS = 120_000;

/** The rotated name of `path` at `nowMs` (Go layout `20060102-150405`, UTC). */
export function rotatedName(path: string, nowMs: number): string {
  const d = new Date(nowMs);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${path}.${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/**
 * What steps 1–3 do to the files of one log, given the names in its directory. Pure.
 * `current` is the base name (`0.log`); rotated files are `0.log.<stamp>[.gz]`.
 */
export function planRotation(current: string, names: readonly string[], maxFiles: number): { remove: string[]; compress: string[] } {
  const mine = names.filter((n) => n.startsWith(`${current}.`));
  const remove = mine.filter((n) => n.endsWith(TMP));
  const live = new Set(mine.filter((n) => !n.endsWith(TMP)));
  for (const n of live) {
    if (!n.endsWith(COMPRESSED) && live.has(`${n}${COMPRESSED}`)) {
      remove.push(n);
      live.delete(n);
    }
  }
  // The stamp sorts by time; `x` and `x.gz` never both remain here.
  const rotated = [...live].sort();
  const keep = Math.max(0, maxFiles - 2);
  const excess = rotated.slice(0, Math.max(0, rotated.length - keep));
  remove.push(...excess);
  const kept = rotated.slice(excess.length);
  const compress = kept.slice(0, -1).filter((n) => !n.endsWith(COMPRESSED));
  return { remove, compress };
}

/** Rotates container logs; `run` is the periodic loop, `rotateOnce` one pass (tests). */
export class ContainerLogManager {
  readonly #o: ContainerLogManagerOptions;

  constructor(o: ContainerLogManagerOptions) {
    if (o.policy.maxFiles < 2) throw new Error('containerLogMaxFiles must be at least 2');
    this.#o = o;
  }

  /** Until `signal` aborts; a pass never overlaps the previous one. */
  async run(signal: AbortSignal): Promise<void> {
    const job = this.#o.clock.every(this.#o.periodMs ?? 10_000, (s) => this.rotateOnce(s), {
      signal,
      timeoutMs: RUN_TIMEOUT_MS,
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Container log rotation failed'),
    });
    await job.stopped;
  }

  /** One pass over the running containers, one at a time (kubelet's single worker). */
  async rotateOnce(signal: AbortSignal): Promise<void> {
    for (const c of [...this.#o.running()]) {
      if (signal.aborted) return;
      if (!c.logPath) continue;
      try {
        await this.#rotateIfNeeded(c.id, c.logPath, signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#o.log.warn({ containerId: c.id, logPath: c.logPath, err: describeError(err) }, 'Container log rotation failed');
      }
    }
  }

  async #rotateIfNeeded(id: string, path: string, signal: AbortSignal): Promise<void> {
    const size = await stat(path).then(
      (s) => s.size,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      },
    );
    if (size === undefined) {
      // A rotation whose reopen and undo both failed left no current file: ask the runtime again.
      await this.#o.runtime.reopenContainerLog({ containerId: id }, { signal });
      return;
    }
    if (size < this.#o.policy.maxSizeBytes) return;
    const dir = dirname(path);
    const current = basename(path);
    // 1–3
    const plan = planRotation(current, await readdir(dir), this.#o.policy.maxFiles);
    for (const n of plan.remove) await rm(join(dir, n), { force: true });
    for (const n of plan.compress) await compress(join(dir, n), signal);
    // 4
    const rotated = rotatedName(path, this.#o.clock.now());
    if (await stat(rotated).then(() => true, () => false)) return; // rotated this second already
    await rename(path, rotated);
    try {
      await this.#o.runtime.reopenContainerLog({ containerId: id }, { signal });
    } catch (err) {
      await rename(rotated, path).catch((undo: unknown) => this.#o.log.warn({ logPath: path, err: describeError(undo) }, 'Container log rename could not be undone'));
      throw err;
    }
    this.#o.log.info({ containerId: id, logPath: path, size }, 'Container log rotated');
  }
}

/** `X` → `X.gz` through `X.gz.tmp` (a crash leaves a `.tmp` that step 1 removes), then removes `X`. */
async function compress(path: string, signal: AbortSignal): Promise<void> {
  const tmp = `${path}${COMPRESSED}${TMP}`;
  try {
    await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp, { mode: 0o640 }), { signal });
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await rename(tmp, `${path}${COMPRESSED}`);
  await rm(path, { force: true });
}
