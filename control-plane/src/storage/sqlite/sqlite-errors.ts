import { AgentError, isAgentError } from '@nodelet/base';

/**
 * Translates better-sqlite3 errors into storage codes, once, at the edge. SqliteError carries
 * SQLite's extended result code name in `code` (e.g. SQLITE_BUSY, SQLITE_CONSTRAINT_UNIQUE).
 */
export function toStorageError(err: unknown, what: string): unknown {
  if (isAgentError(err)) return err;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return err;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new AgentError('ERR_UNAVAILABLE', `${what}: the database is locked by another writer; retry`, { cause: err });
  }
  if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
    // Only UNIQUE(name, prev_revision) can fire: another writer replaced the same row first.
    return new AgentError('ERR_CONFLICT', `${what}: the key was modified concurrently`, { cause: err });
  }
  if (code === 'SQLITE_FULL') {
    return new AgentError('ERR_RESOURCE_EXHAUSTED', `${what}: the disk holding the database is full`, { cause: err });
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_IOERR')) {
    return new AgentError('ERR_UNAVAILABLE', `${what}: cannot write the database file (${code})`, { cause: err, retryable: false });
  }
  return new AgentError('ERR_INTERNAL', `${what}: ${code}`, { cause: err });
}
