import { AgentError, Wakeup, isAbortError, type Logger } from '@nodelet/base';
import type { WatchEvent } from '../types.js';
import { rowToEvent, type Row } from './schema.js';

/** What the hub and its watchers read from the database (synchronous better-sqlite3 calls). */
export interface WatchSource {
  /** Rows with id > after, in id order, at most `limit`. */
  rowsAfter(after: number, limit: number): Row[];
  /**
   * In one read snapshot: the compacted revision and the rows under `prefix` with
   * after < id <= upTo, in id order, at most `limit`.
   */
  replay(prefix: string, after: number, upTo: number, limit: number): { compacted: number; rows: Row[] };
  currentRevision(): number;
}

const HUB_BATCH = 1000;
const REPLAY_BATCH = 500;
/** Default number of events a slow watcher may have queued before it falls back to reading the table itself. */
export const DEFAULT_WATCH_QUEUE_LIMIT = 10_000;

/**
 * Fans new rows out to live watchers: one query per wake-up, however many watchers there are
 * (kine's single poller). In-process writes call `notify()` after their commit, which runs one
 * step on the next microtask; a low-frequency poll picks up writes from other processes.
 *
 *   watcher: replay (reads its own rows up to hub cursor) ──caught up──▶ live (hub pushes)
 *              ▲                                                          │
 *              └──────────── queue overflow (slow consumer) ◀─────────────┘
 *
 * Everything here is synchronous between awaits, so "replay up to cursor, then attach" cannot
 * miss or duplicate a row.
 */
export class SqliteWatchHub {
  #cursor = 0;
  readonly #live = new Set<SqliteWatcher>();
  #scheduled = false;
  #poll: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly source: WatchSource,
    private readonly pollIntervalMs: number,
    private readonly log: Logger,
  ) {}

  get cursor(): number {
    return this.#cursor;
  }

  /** Called after every in-process commit; coalesces into one step per microtask. */
  notify(): void {
    if (this.#scheduled || this.#live.size === 0 || this.#closed) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#step();
    });
  }

  /** Makes the cursor current when nobody is listening, so a new watcher replays less. */
  prepareAttach(): void {
    if (this.#live.size === 0) this.#cursor = Math.max(this.#cursor, this.source.currentRevision());
  }

  attach(w: SqliteWatcher): void {
    this.#live.add(w);
    if (!this.#poll) {
      this.#poll = setInterval(() => this.#step(), this.pollIntervalMs);
      this.#poll.unref();
    }
  }

  detach(w: SqliteWatcher): void {
    this.#live.delete(w);
    if (this.#live.size === 0 && this.#poll) {
      clearInterval(this.#poll);
      this.#poll = undefined;
    }
  }

  close(): void {
    this.#closed = true;
    for (const w of [...this.#live]) w.fail(new AgentError('ERR_UNAVAILABLE', 'storage is closed'));
    this.#live.clear();
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #step(): void {
    if (this.#closed || this.#live.size === 0) return;
    try {
      for (;;) {
        const rows = this.source.rowsAfter(this.#cursor, HUB_BATCH);
        for (const row of rows) {
          const ev = rowToEvent(row);
          for (const w of this.#live) if (row.name.startsWith(w.prefix)) w.push(ev);
          this.#cursor = row.id;
        }
        if (rows.length < HUB_BATCH) break;
      }
      for (const w of this.#live) w.caughtUp(this.#cursor);
    } catch (err) {
      this.log.error({ err }, 'Storage watch poll failed');
      for (const w of [...this.#live]) w.fail(new AgentError('ERR_INTERNAL', 'storage watch failed', { cause: err }));
    }
  }
}

/** One watch: replays history from its cursor, then receives pushes from the hub. */
export class SqliteWatcher {
  #queue: WatchEvent[] = [];
  #cursor: number;
  #live = false;
  #error: unknown;
  readonly #wake = new Wakeup();

  constructor(
    private readonly hub: SqliteWatchHub,
    private readonly source: WatchSource,
    readonly prefix: string,
    afterRevision: number,
    private readonly queueLimit = DEFAULT_WATCH_QUEUE_LIMIT,
  ) {
    this.#cursor = afterRevision;
  }

  push(ev: WatchEvent): void {
    if (ev.revision <= this.#cursor || !this.#live) return;
    if (this.#queue.length >= this.queueLimit) {
      // A consumer this slow goes back to reading the table from its last delivered event.
      this.#queue = [];
      this.#live = false;
      this.hub.detach(this);
    } else {
      this.#queue.push(ev);
    }
    this.#wake.notify();
  }

  caughtUp(revision: number): void {
    if (this.#live && this.#queue.length === 0 && revision > this.#cursor) this.#cursor = revision;
  }

  fail(err: unknown): void {
    this.#error ??= err;
    this.#live = false;
    this.#wake.notify();
  }

  async *events(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    // Stop taking pushes at once on abort, even while the consumer is not inside next().
    const onAbort = (): void => {
      this.#live = false;
      this.#queue = [];
      this.hub.detach(this);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const ev = this.#queue.shift();
        if (ev) {
          this.#cursor = ev.revision;
          yield ev;
          continue;
        }
        if (this.#error !== undefined) throw this.#error;
        if (!this.#live) {
          this.#replayBatch();
          continue;
        }
        try {
          await this.#wake.wait(signal);
        } catch (err) {
          if (isAbortError(err)) return;
          throw err;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.hub.detach(this);
    }
  }

  /** Reads one batch of history; attaches to the hub once it has read up to the hub's cursor. */
  #replayBatch(): void {
    this.hub.prepareAttach();
    const upTo = this.hub.cursor;
    const { compacted, rows } = this.source.replay(this.prefix, this.#cursor, upTo, REPLAY_BATCH);
    if (this.#cursor < compacted) {
      throw new AgentError('ERR_GONE', `revision ${this.#cursor} has been compacted (oldest available: ${compacted})`);
    }
    this.#queue.push(...rows.map(rowToEvent));
    if (rows.length < REPLAY_BATCH) {
      this.#live = true;
      this.hub.attach(this);
      if (this.#queue.length === 0 && upTo > this.#cursor) this.#cursor = upTo;
    }
  }
}
