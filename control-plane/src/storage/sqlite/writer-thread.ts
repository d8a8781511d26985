/**
 * The SQLite store's writer thread (group-commit.ts starts it). It owns the store's one write
 * connection and commits each batch it is sent as one IMMEDIATE transaction, each write in its
 * own savepoint, then answers with the outcomes. The commit's fsync happens here, off the API
 * server's event loop, and the writes that arrive meanwhile make up the next batch.
 *
 *   main ─{ batch, ops }─▶ BEGIN IMMEDIATE · SAVEPOINT w1 … wN · COMMIT (fsync) ─{ batch, outcomes }─▶ main
 *   main ─{ close }─▶ close the connection, end the thread
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './open-database.js';
import { SqliteStatements } from './sqlite-statements.js';
import { applyWrite, describeWrite, toWireError, type WriteOp, type WriteOutcome } from './write-ops.js';
import type { WriterReply, WriterRequest, WriterStart } from './writer-protocol.js';

const port = parentPort!;
const start = workerData as WriterStart;

function reply(m: WriterReply): void {
  port.postMessage(m);
}

function commit(sql: SqliteStatements, ops: readonly WriteOp[]): WriterReply {
  const outcomes: WriteOutcome[] = [];
  try {
    sql.writeTx(() => {
      for (const w of ops) {
        try {
          outcomes.push({ ok: true, value: sql.savepoint(() => applyWrite(sql, w)) });
        } catch (err) {
          outcomes.push({ ok: false, err: toWireError(err, describeWrite(w)) });
        }
      }
    });
  } catch (err) {
    // BEGIN or COMMIT failed: nothing of this batch is durable.
    return { type: 'failed', err: toWireError(err, `commit of ${ops.length} writes`) };
  }
  return { type: 'committed', outcomes };
}

let db: ReturnType<typeof openDatabase> | undefined;
try {
  db = openDatabase(start.path, start.busyTimeoutMs);
} catch (err) {
  reply({ type: 'fatal', err: toWireError(err, `cannot open SQLite store "${start.path}"`) });
  port.close();
}
if (db) {
  const sql = new SqliteStatements(db);
  const open = db;
  port.on('message', (m: WriterRequest) => {
    if (m.type === 'close') {
      open.close();
      port.close();
      return;
    }
    reply(commit(sql, m.ops));
  });
}
