/**
 * The SQLite store's writes as data, so the writer thread (writer-thread.ts) can apply them:
 * each is a compare-and-swap on the key's latest row followed by one appended row.
 */
import { AgentError, isAgentError } from '@nodelet/base';
import type { KeyValue } from '../types.js';
import { createRevisionOf, rowToKv, type Row } from './schema.js';
import { toStorageError } from './sqlite-errors.js';
import type { SqliteStatements } from './sqlite-statements.js';

export type WriteOp =
  | { op: 'create'; key: string; value: Uint8Array }
  | { op: 'update'; key: string; value: Uint8Array; expectedRevision: number }
  | { op: 'delete'; key: string; expectedRevision?: number };

/** What a write resolves to: the new revision, and for a delete the value it removed. */
export type WriteValue = number | { revision: number; kv: KeyValue };

/** An error as it crosses the thread boundary (an AgentError's code, message and retryability). */
export interface WireError {
  code: string;
  message: string;
  retryable: boolean;
}

export type WriteOutcome = { ok: true; value: WriteValue } | { ok: false; err: WireError };

/** "create "/registry/…"": what an error message says the write was. */
export function describeWrite(w: WriteOp): string {
  return `${w.op} "${w.key}"`;
}

/** Applies one write inside the caller's transaction; throws AgentErrors (or SQLite errors). */
export function applyWrite(sql: SqliteStatements, w: WriteOp): WriteValue {
  switch (w.op) {
    case 'create': {
      const latest = sql.latest(w.key);
      if (latest && !latest.deleted) throw new AgentError('ERR_ALREADY_EXISTS', `key "${w.key}" already exists`);
      return sql.insert(w.key, { created: 1, createRevision: 0, prevRevision: latest?.id ?? 0, value: w.value });
    }
    case 'update': {
      const latest = liveOrThrow(sql, w.key, w.expectedRevision);
      return sql.insert(w.key, { createRevision: createRevisionOf(latest), prevRevision: latest.id, value: w.value, oldValue: latest.value });
    }
    case 'delete': {
      const latest = liveOrThrow(sql, w.key, w.expectedRevision);
      // The tombstone keeps the removed value so the DELETE event outlives compaction of its row.
      const revision = sql.insert(w.key, { deleted: 1, createRevision: createRevisionOf(latest), prevRevision: latest.id, value: latest.value });
      return { revision, kv: rowToKv(latest) };
    }
  }
}

/** The key's live latest row, checked against the caller's expected revision. */
function liveOrThrow(sql: SqliteStatements, key: string, expectedRevision: number | undefined): Row {
  const latest = sql.latest(key);
  if (!latest || latest.deleted) throw new AgentError('ERR_NOT_FOUND', `key "${key}" not found`);
  if (expectedRevision !== undefined && latest.id !== expectedRevision) {
    throw new AgentError('ERR_CONFLICT', `key "${key}" is at revision ${latest.id}, not ${expectedRevision}`);
  }
  return latest;
}

/** A storage error, translated, in the shape that crosses to the main thread. */
export function toWireError(err: unknown, what: string): WireError {
  const e = toStorageError(err, what);
  if (isAgentError(e)) return { code: e.code, message: e.message, retryable: e.retryable };
  return { code: 'ERR_INTERNAL', message: `${what}: ${e instanceof Error ? e.message : String(e)}`, retryable: false };
}

/** The AgentError a {@link WireError} stands for. */
export function fromWireError(e: WireError): AgentError {
  return new AgentError(e.code as AgentError['code'], e.message, { retryable: e.retryable });
}
