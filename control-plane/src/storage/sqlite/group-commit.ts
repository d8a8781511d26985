import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { AgentError } from '@nodelet/base';
import { fromWireError, type WriteOp, type WriteValue } from './write-ops.js';
import type { WriterReply, WriterRequest, WriterStart } from './writer-protocol.js';

interface PendingWrite {
  op: WriteOp;
  resolve(value: WriteValue): void;
  reject(err: unknown): void;
}

/** Most writes one transaction carries; the rest go into the next one. */
const MAX_BATCH = 256;

/**
 * Group commit on a writer thread (writer-thread.ts). Writes queue here; the queue goes to the
 * thread as one batch, committed as one IMMEDIATE transaction with one fsync (synchronous =
 * FULL), each write in its own savepoint so a failed compare-and-swap rolls back only itself.
 * One batch is in flight at a time, and everything submitted while it commits is the next batch,
 * so batches grow with the load and the event loop never waits for the disk. Writes apply in
 * submission order, and none resolves before the commit that holds it is durable; if the commit
 * fails, all of its writes reject.
 *
 *   submit() ─queue─▶ (no batch in flight) ─▶ writer thread: BEGIN IMMEDIATE · SAVEPOINT w1 … wN · COMMIT ─▶ resolve all ─▶ next batch
 *
 * If the thread dies with a batch in flight, that batch's writes reject with ERR_UNAVAILABLE
 * (they may or may not have committed, as when a reply from etcd is lost) and the next batch
 * starts a new thread. If it cannot open the database, every write fails with its error.
 */
export class GroupCommitter {
  #pending: PendingWrite[] = [];
  #inFlight: PendingWrite[] | undefined;
  #worker: Worker | undefined;
  #scheduled = false;
  #fatal: AgentError | undefined;
  #closed = false;

  constructor(
    private readonly start: WriterStart,
    /** Runs after each successful commit (wakes the watch hub). */
    private readonly onCommit: () => void,
  ) {}

  submit(op: WriteOp): Promise<WriteValue> {
    if (this.#closed) return Promise.reject(new AgentError('ERR_UNAVAILABLE', 'storage is closed'));
    if (this.#fatal) return Promise.reject(this.#fatal);
    return new Promise<WriteValue>((resolve, reject) => {
      this.#pending.push({ op, resolve, reject });
      // Writes submitted in the same tick go in the same batch.
      if (!this.#scheduled && !this.#inFlight) {
        this.#scheduled = true;
        queueMicrotask(() => {
          this.#scheduled = false;
          this.#send();
        });
      }
    });
  }

  /** Rejects writes not yet sent, lets the batch in flight finish, and ends the writer thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#pending.splice(0)) w.reject(new AgentError('ERR_UNAVAILABLE', 'storage is closed'));
    const worker = this.#worker;
    if (!worker) return;
    const exited = once(worker, 'exit');
    worker.ref();
    worker.postMessage({ type: 'close' } satisfies WriterRequest);
    await exited;
  }

  #send(): void {
    if (this.#inFlight || this.#pending.length === 0 || this.#closed) return;
    const batch = this.#pending.splice(0, MAX_BATCH);
    this.#inFlight = batch;
    const worker = (this.#worker ??= this.#spawn());
    // Referenced only while a batch is in flight: an idle store does not keep the process alive.
    worker.ref();
    const ops = batch.map((w) => w.op);
    // The values are the store's own copies (sqlite-store.ts): moved to the thread, not cloned again.
    const values = ops.flatMap((o) => (o.op !== 'delete' && ownsBuffer(o.value) ? [o.value.buffer] : []));
    worker.postMessage({ type: 'batch', ops } satisfies WriterRequest, values);
  }

  #spawn(): Worker {
    const worker = spawnWriterThread(this.start);
    worker.on('message', (m: WriterReply) => this.#onReply(m));
    worker.on('error', () => undefined); // the exit that follows settles the batch
    worker.on('exit', () => this.#onExit(worker));
    return worker;
  }

  #onReply(m: WriterReply): void {
    const batch = this.#inFlight ?? [];
    this.#inFlight = undefined;
    if (m.type === 'fatal') {
      this.#fatal = fromWireError(m.err);
      for (const w of [...batch, ...this.#pending.splice(0)]) w.reject(this.#fatal);
      return;
    }
    if (m.type === 'failed') {
      const err = fromWireError(m.err);
      for (const w of batch) w.reject(err);
    } else {
      batch.forEach((w, i) => {
        const o = m.outcomes[i];
        if (o?.ok) w.resolve(o.value);
        else w.reject(o ? fromWireError(o.err) : new AgentError('ERR_INTERNAL', 'the writer thread answered fewer writes than it was sent'));
      });
      this.onCommit();
    }
    if (this.#pending.length > 0) this.#send();
    // While closing, the thread stays referenced until it has exited (close() waits for that).
    else if (!this.#closed) this.#worker?.unref();
  }

  #onExit(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    const lost = this.#inFlight ?? [];
    this.#inFlight = undefined;
    for (const w of lost) w.reject(new AgentError('ERR_UNAVAILABLE', 'the storage writer thread ended before answering; the write may or may not have been committed'));
    if (!this.#closed && !this.#fatal) this.#send();
  }
}

/** True when `v` is the whole of a plain ArrayBuffer, which can be moved to the thread instead of copied. */
function ownsBuffer(v: Uint8Array): v is Uint8Array<ArrayBuffer> {
  return v.buffer instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength;
}

/**
 * Starts writer-thread.ts. A source checkout runs under tsx (`--import tsx`), which Node 20 does
 * not apply to worker threads, so there the thread registers tsx before loading the TypeScript.
 */
function spawnWriterThread(start: WriterStart): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './writer-thread.ts' : './writer-thread.js', import.meta.url);
  if (!fromSource) return new Worker(entry, { workerData: start });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: start });
}
