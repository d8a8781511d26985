import type Database from 'better-sqlite3';
import { AgentError, noopLogger, type Disposable, type Logger } from '@nodelet/base';
import { startCompactor, type CompactorOptions } from '../compactor.js';
import { checkKey, checkRevision, prefixRangeEndString } from '../keys.js';
import type { KeyValue, ListOptions, ListResult, Store, WatchEvent, WatchOptions } from '../types.js';
import { COMPACT_REV_KEY, rowToKv, type Row } from './schema.js';
import { GroupCommitter } from './group-commit.js';
import { openDatabase } from './open-database.js';
import { toStorageError } from './sqlite-errors.js';
import { SqliteStatements } from './sqlite-statements.js';
import { SqliteWatchHub, SqliteWatcher, type WatchSource } from './sqlite-watch.js';

export interface SqliteStoreOptions {
  /** Database file (created with its directory if missing). */
  path: string;
  logger?: Logger;
  /** How often watchers look for rows written by other processes. Default 1000 ms. */
  pollIntervalMs?: number;
  /** SQLite busy timeout when another process holds the write lock. Default 30 s (as kine). */
  busyTimeoutMs?: number;
  /**
   * Events a live watcher may have queued (consumer slower than writers) before it stops taking
   * pushes and reads the table from its last delivered event instead. Default 10,000.
   */
  watchQueueLimit?: number;
  /** Background compaction (off unless given). */
  compactor?: CompactorOptions;
}

/** Compaction deletes in windows of this many revisions, yielding to the event loop between them. */
const COMPACT_BATCH = 1000;

/**
 * Opens (creating if needed) a kine-style SQLite store. Reads are synchronous better-sqlite3
 * calls on the main thread's connection (WAL lets them run beside a commit); writes are group
 * committed on a writer thread (group-commit.ts), each batch one IMMEDIATE transaction committed
 * with `synchronous = FULL` in WAL mode, so a resolved write survives `kill -9` and power loss.
 */
export function createSqliteStore(opts: SqliteStoreOptions): Store {
  return new SqliteStore(opts);
}

class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #sql: SqliteStatements;
  readonly #hub: SqliteWatchHub;
  readonly #writes: GroupCommitter;
  readonly #source: WatchSource;
  readonly #log: Logger;
  readonly #compactor: Disposable | undefined;
  readonly #watchQueueLimit: number | undefined;
  #closed = false;

  constructor(opts: SqliteStoreOptions) {
    this.#log = (opts.logger ?? noopLogger).child({ component: 'storage-sqlite' });
    this.#watchQueueLimit = opts.watchQueueLimit;
    const busyTimeoutMs = opts.busyTimeoutMs ?? 30_000;
    this.#db = openDatabase(opts.path, busyTimeoutMs);
    this.#sql = new SqliteStatements(this.#db);
    this.#source = {
      rowsAfter: (after, limit) => this.#sql.rowsAfter(after, limit),
      replay: (prefix, after, upTo, limit) => this.#replay(prefix, after, upTo, limit),
      currentRevision: () => this.#sql.currentRevision(),
    };
    this.#hub = new SqliteWatchHub(this.#source, opts.pollIntervalMs ?? 1000, this.#log);
    this.#writes = new GroupCommitter({ path: opts.path, busyTimeoutMs }, () => this.#hub.notify());
    this.#log.info({ path: opts.path, revision: this.#sql.currentRevision() }, 'SQLite store opened');
    this.#compactor = opts.compactor ? startCompactor(this, { ...opts.compactor, logger: this.#log }) : undefined;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<KeyValue | undefined> {
    this.#check(opts?.signal);
    checkKey(key);
    const row = this.#run('get', () => this.#sql.latest(key));
    return row && !row.deleted ? rowToKv(row) : undefined;
  }

  async list(prefix: string, opts: ListOptions & { signal?: AbortSignal } = {}): Promise<ListResult> {
    this.#check(opts.signal);
    if (opts.revision !== undefined) checkRevision('revision', opts.revision);
    const limit = opts.limit ?? 0;
    checkRevision('limit', limit);
    return this.#run('list', () =>
      this.#sql.readTx(() => {
        const current = this.#sql.currentRevision();
        const revision = opts.revision || current;
        this.#checkReadable(revision, current);
        const after = opts.startAfter ?? '';
        const rows = this.#sql.list(prefix, prefixRangeEndString(prefix), after, revision, limit > 0 ? limit + 1 : -1);
        const more = limit > 0 && rows.length > limit;
        const items = (more ? rows.slice(0, limit) : rows).map(rowToKv);
        const result: ListResult = { items, revision, more };
        if (more) result.remaining = this.#sql.count(prefix, prefixRangeEndString(prefix), items.at(-1)!.key, revision);
        return result;
      }),
    );
  }

  async count(prefix: string): Promise<number> {
    this.#check();
    return this.#run('count', () =>
      this.#sql.readTx(() => this.#sql.count(prefix, prefixRangeEndString(prefix), '', this.#sql.currentRevision())),
    );
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    this.#check();
    checkKey(key);
    // Copied now: the write is sent later (after the batch in flight), and the caller may reuse its buffer.
    return (await this.#writes.submit({ op: 'create', key, value: new Uint8Array(value) })) as number;
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    this.#check();
    checkKey(key);
    checkRevision('expectedRevision', expectedRevision);
    return (await this.#writes.submit({ op: 'update', key, value: new Uint8Array(value), expectedRevision })) as number;
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; kv: KeyValue }> {
    this.#check();
    checkKey(key);
    if (expectedRevision !== undefined) checkRevision('expectedRevision', expectedRevision);
    const { revision, kv } = (await this.#writes.submit({ op: 'delete', key, expectedRevision })) as { revision: number; kv: KeyValue };
    // Structured clone hands a Buffer back as a plain Uint8Array; reads return Buffers.
    return { revision, kv: { ...kv, value: Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength) } };
  }

  watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
    this.#check();
    checkRevision('afterRevision', opts.afterRevision);
    return new SqliteWatcher(this.#hub, this.#source, prefix, opts.afterRevision, this.#watchQueueLimit).events(opts.signal);
  }

  async currentRevision(): Promise<number> {
    this.#check();
    return this.#run('read revision', () => this.#sql.currentRevision());
  }

  async compactedRevision(): Promise<number> {
    this.#check();
    return this.#run('read compacted revision', () => this.#sql.compactedRevision());
  }

  async compact(revision: number): Promise<void> {
    this.#check();
    checkRevision('revision', revision);
    const previous = this.#run('compact', () =>
      this.#sql.writeTx(() => {
        const current = this.#sql.currentRevision();
        if (revision > current) {
          throw new AgentError('ERR_INVALID_ARGUMENT', `cannot compact to revision ${revision}: the current revision is ${current}`);
        }
        const old = this.#sql.compactedRevision();
        // Recorded first, so readers get ERR_GONE instead of a half-deleted history.
        if (revision > old) this.#sql.setMeta(COMPACT_REV_KEY, revision);
        return old;
      }),
    );
    if (revision <= previous) return;
    let deleted = this.#run('compact', () => this.#sql.writeTx(() => this.#sql.compactRange(0, previous, revision)));
    for (let from = previous; from < revision && !this.#closed; from += COMPACT_BATCH) {
      const to = Math.min(from + COMPACT_BATCH, revision);
      deleted += this.#run('compact', () => this.#sql.writeTx(() => this.#sql.compactRange(from, to, revision)));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.#log.info({ revision, deleted }, 'Storage compacted');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#compactor?.dispose();
    await this.#writes.close();
    this.#hub.close();
    this.#db.close();
  }

  #replay(prefix: string, after: number, upTo: number, limit: number): { compacted: number; rows: Row[] } {
    if (this.#closed) throw new AgentError('ERR_UNAVAILABLE', 'storage is closed');
    return this.#run('watch', () =>
      this.#sql.readTx(() => ({
        compacted: this.#sql.compactedRevision(),
        rows: this.#sql.rowsUnder(prefix, prefixRangeEndString(prefix), after, upTo, limit),
      })),
    );
  }

  #checkReadable(revision: number, current: number): void {
    const compacted = this.#sql.compactedRevision();
    if (revision < compacted) {
      throw new AgentError('ERR_GONE', `revision ${revision} has been compacted (oldest available: ${compacted})`);
    }
    if (revision > current) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `revision ${revision} is in the future (current: ${current})`);
    }
  }

  #check(signal?: AbortSignal): void {
    signal?.throwIfAborted();
    if (this.#closed) throw new AgentError('ERR_UNAVAILABLE', 'storage is closed');
  }

  #run<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw toStorageError(err, what);
    }
  }
}
