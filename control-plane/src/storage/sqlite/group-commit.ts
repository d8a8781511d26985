import { AgentError } from '@nodelet/base';
import { toStorageError } from './sqlite-errors.js';
import type { SqliteStatements } from './sqlite-statements.js';

interface PendingWrite {
  what: string;
  fn: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** Most writes one transaction carries; the rest go into the next one. */
const MAX_BATCH = 256;

/**
 * Group commit: writes submitted in the same tick share one IMMEDIATE transaction, so one
 * fsync (synchronous = FULL) acknowledges all of them. Each write runs in its own savepoint, so
 * a failed compare-and-swap rolls back only that write. Writes apply in submission order, and
 * none resolves before the commit that holds it is durable; if the commit fails, all of its
 * writes reject.
 *
 *   submit() ─queue─▶ microtask: BEGIN IMMEDIATE · SAVEPOINT w1 … SAVEPOINT wN · COMMIT (fsync) ─▶ resolve all
 */
export class GroupCommitter {
  #pending: PendingWrite[] = [];
  #closed = false;

  constructor(
    private readonly sql: SqliteStatements,
    /** Runs after each successful commit (wakes the watch hub). */
    private readonly onCommit: () => void,
  ) {}

  submit<T>(what: string, fn: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new AgentError('ERR_UNAVAILABLE', 'storage is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ what, fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.#pending.length === 1) queueMicrotask(() => this.#flush());
    });
  }

  /** Rejects writes not yet committed. */
  close(): void {
    this.#closed = true;
    for (const w of this.#pending.splice(0)) w.reject(new AgentError('ERR_UNAVAILABLE', 'storage is closed'));
  }

  #flush(): void {
    while (this.#pending.length > 0 && !this.#closed) {
      const batch = this.#pending.splice(0, MAX_BATCH);
      const outcomes: Outcome[] = [];
      try {
        this.sql.writeTx(() => {
          for (const w of batch) {
            try {
              outcomes.push({ ok: true, value: this.sql.savepoint(w.fn) });
            } catch (err) {
              outcomes.push({ ok: false, err: toStorageError(err, w.what) });
            }
          }
        });
      } catch (err) {
        // BEGIN or COMMIT failed: nothing of this batch is durable.
        for (const w of batch) w.reject(toStorageError(err, w.what));
        continue;
      }
      batch.forEach((w, i) => {
        const o = outcomes[i]!;
        if (o.ok) w.resolve(o.value);
        else w.reject(o.err);
      });
      this.onCommit();
    }
  }
}
