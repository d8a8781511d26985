/** Messages between the SQLite store (group-commit.ts) and its writer thread (writer-thread.ts). */
import type { WireError, WriteOp, WriteOutcome } from './write-ops.js';

/** The writer thread's workerData. */
export interface WriterStart {
  path: string;
  busyTimeoutMs: number;
}

/** One batch at a time: the next is sent after the reply to the last. */
export type WriterRequest = { type: 'batch'; ops: WriteOp[] } | { type: 'close' };

export type WriterReply =
  /** One outcome per op, in order; the commit is durable. */
  | { type: 'committed'; outcomes: WriteOutcome[] }
  /** BEGIN or COMMIT failed: no op of the batch applied. */
  | { type: 'failed'; err: WireError }
  /** The thread could not open the database; it has ended. */
  | { type: 'fatal'; err: WireError };
