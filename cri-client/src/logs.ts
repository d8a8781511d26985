/**
 * Reader for CRI container log files (the files at ContainerStatus.log_path). Each line is
 *
 *   <RFC3339Nano timestamp> <stdout|stderr> <P|F> <content>
 *
 * where P marks a partial line that continues in the next record and F ends a line (cri-api
 * constants). Records of one stream ending in F are joined into one entry; the entry carries the
 * timestamp of its first record, like `kubectl logs --timestamps`.
 *
 * Used by `nodelet cri logs` and by the agent's container-logs endpoint.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { abortError, delay } from '@nodelet/base';
import { findTailStart, rotatedLogs } from './log-tail.js';

export type CriLogStream = 'stdout' | 'stderr';

export interface CriLogRecord {
  /** The timestamp exactly as written (nanosecond precision). */
  timestamp: string;
  stream: CriLogStream;
  partial: boolean;
  content: string;
}

export interface CriLogEntry {
  timestamp: string;
  /** Millisecond precision of `timestamp`. */
  time: Date;
  stream: CriLogStream;
  /** The line without its newline. */
  content: string;
}

export interface ReadCriLogOptions {
  /** Only the last N lines (after joining partial records). Negative or undefined: all. */
  tail?: number;
  /** Only lines with a timestamp at or after this time. */
  since?: Date;
  /** Only one stream (default both). */
  stream?: CriLogStream | 'all';
  signal?: AbortSignal;
  /** Called once the log file is open, before anything is read (a server answers 200 only then). */
  opened?: () => void;
}

export interface FollowCriLogOptions extends ReadCriLogOptions {
  /** How often to look for new data (default 250 ms). */
  pollMs?: number;
  /**
   * Polled when there is no new data; when it resolves true the rest of the file is drained and
   * the iteration ends (crictl/kubelet stop following once the container has exited).
   */
  isFinished?: () => Promise<boolean>;
}

/** Parses one raw line; undefined for lines that do not follow the format. */
export function parseCriLogLine(line: string): CriLogRecord | undefined {
  const s1 = line.indexOf(' ');
  if (s1 <= 0) return undefined;
  const s2 = line.indexOf(' ', s1 + 1);
  if (s2 < 0) return undefined;
  const stream = line.slice(s1 + 1, s2);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const s3 = line.indexOf(' ', s2 + 1);
  const tag = s3 < 0 ? line.slice(s2 + 1) : line.slice(s2 + 1, s3);
  // The tag field may carry further ':'-separated flags after P/F; only the first matters.
  const kind = tag.split(':')[0];
  if (kind !== 'P' && kind !== 'F') return undefined;
  return { timestamp: line.slice(0, s1), stream, partial: kind === 'P', content: s3 < 0 ? '' : line.slice(s3 + 1) };
}

/** Formats an entry as `logs` prints it: `[<timestamp> ]<content>\n`. */
export function formatCriLogEntry(entry: CriLogEntry, opts: { timestamps?: boolean } = {}): string {
  return `${opts.timestamps ? `${entry.timestamp} ` : ''}${entry.content}\n`;
}

/** Joins partial records per stream and applies the since/stream filters. */
class EntryAssembler {
  readonly #pending = new Map<CriLogStream, { timestamp: string; parts: string[] }>();
  constructor(private readonly opts: ReadCriLogOptions) {}

  push(record: CriLogRecord): CriLogEntry | undefined {
    if (this.opts.stream && this.opts.stream !== 'all' && record.stream !== this.opts.stream) return undefined;
    const p = this.#pending.get(record.stream) ?? { timestamp: record.timestamp, parts: [] };
    p.parts.push(record.content);
    if (record.partial) {
      this.#pending.set(record.stream, p);
      return undefined;
    }
    this.#pending.delete(record.stream);
    const time = new Date(p.timestamp);
    if (this.opts.since && !(time.getTime() >= this.opts.since.getTime())) return undefined;
    return { timestamp: p.timestamp, time, stream: record.stream, content: p.parts.join('') };
  }
}

/**
 * Reads complete lines from a file handle starting at `position`, one buffer at a time (memory
 * stays bounded whatever the file's size); keeps the unterminated rest. A UTF-8 character split
 * across two reads is decoded whole.
 */
class LineReader {
  #rest = '';
  #decoder = new StringDecoder('utf8');
  readonly #buf = Buffer.allocUnsafe(64 * 1024);
  /** Reads stop here (a snapshot of the file's size); undefined: at EOF, wherever it is then. */
  end: number | undefined;
  constructor(
    private fh: FileHandle,
    public position = 0,
  ) {}

  get handle(): FileHandle {
    return this.fh;
  }

  /** The complete lines of the next read, or undefined at EOF. */
  async readChunk(): Promise<string[] | undefined> {
    const len = this.end === undefined ? this.#buf.length : Math.min(this.#buf.length, this.end - this.position);
    if (len <= 0) return undefined;
    const { bytesRead } = await this.fh.read(this.#buf, 0, len, this.position);
    if (bytesRead === 0) return undefined;
    this.position += bytesRead;
    const parts = (this.#rest + this.#decoder.write(this.#buf.subarray(0, bytesRead))).split('\n');
    this.#rest = parts.pop() ?? '';
    return parts;
  }

  /** The complete lines from here to EOF, read by read. */
  async *readAvailable(): AsyncGenerator<string[]> {
    for (let lines = await this.readChunk(); lines; lines = await this.readChunk()) yield lines;
  }

  async reopen(fh: FileHandle): Promise<void> {
    await this.fh.close().catch(() => {}); // the old handle is done with either way
    this.fh = fh;
    this.position = 0;
    this.end = undefined;
    this.#rest = '';
    this.#decoder = new StringDecoder('utf8');
  }

  close(): Promise<void> {
    return this.fh.close().catch(() => {}); // closing a log reader: nobody is left to tell
  }
}

function* toEntries(lines: readonly string[], asm: EntryAssembler): Generator<CriLogEntry> {
  for (const line of lines) {
    const rec = parseCriLogLine(line);
    if (!rec) continue;
    const entry = asm.push(rec);
    if (entry) yield entry;
  }
}

/**
 * How long a reader waits for the runtime to make a new log file after a rotation renamed the
 * old one (the agent renames, then asks the runtime over CRI to reopen: one local call).
 */
const ROTATION_REOPEN_WAIT_MS = 2_000;

async function openLog(path: string, signal?: AbortSignal): Promise<FileHandle> {
  const until = Date.now() + ROTATION_REOPEN_WAIT_MS;
  for (;;) {
    try {
      return await open(path, 'r');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Between a rotation's rename and the runtime's reopen the file is briefly missing.
      if (code === 'ENOENT' && Date.now() < until && (await rotatedLogs(path)).length > 0) {
        await delay(20, signal).catch((e: unknown) => {
          throw abortError(e);
        });
        continue;
      }
      if (code === 'ENOENT') throw new Error(`container log file "${path}" does not exist (the container may have been removed)`, { cause: err });
      if (code === 'EACCES') throw new Error(`cannot read container log file "${path}": permission denied (run as root)`, { cause: err });
      throw err;
    }
  }
}

/**
 * Yields the entries up to EOF as they are read; with `tail`, only the last `tail` of them,
 * found from the end of the file (log-tail.ts) and, when the file holds fewer, from the end of
 * its uncompressed rotated files before it. Memory does not depend on the files' sizes.
 */
async function* readInitial(reader: LineReader, asm: EntryAssembler, path: string, opts: ReadCriLogOptions): AsyncGenerator<CriLogEntry> {
  const { tail, signal } = opts;
  if (tail !== undefined && tail >= 0) {
    const { offset, count } = await findTailStart(reader.handle, tail, opts.stream, reader.end);
    if (count < tail) yield* readRotatedTail(path, tail - count, asm, opts);
    reader.position = offset;
  }
  for await (const lines of reader.readAvailable()) {
    if (signal?.aborted) throw abortError(signal.reason);
    yield* toEntries(lines, asm);
  }
}

/** The last `want` entries held by the rotated files of `path`, oldest file first. */
async function* readRotatedTail(path: string, want: number, asm: EntryAssembler, opts: ReadCriLogOptions): AsyncGenerator<CriLogEntry> {
  const parts: Array<{ fh: FileHandle; offset: number }> = [];
  try {
    for (const older of await rotatedLogs(path)) {
      if (want <= 0) break;
      const fh = await open(older, 'r').catch(() => undefined); // rotated away meanwhile: stop here
      if (!fh) break;
      const { offset, count } = await findTailStart(fh, want, opts.stream);
      parts.unshift({ fh, offset });
      want -= count;
    }
    for (const part of parts) {
      const r = new LineReader(part.fh, part.offset);
      for await (const lines of r.readAvailable()) {
        if (opts.signal?.aborted) throw abortError(opts.signal.reason);
        yield* toEntries(lines, asm);
      }
    }
  } finally {
    await Promise.all(parts.map((p) => p.fh.close().catch(() => {}))); // as above
  }
}

async function* readToEnd(reader: LineReader, asm: EntryAssembler): AsyncGenerator<CriLogEntry> {
  for await (const lines of reader.readAvailable()) yield* toEntries(lines, asm);
}

/**
 * Reads the file once, to the end it had when opened (streamed; see LineReader). Without that
 * bound a reader slower than a fast writer would never finish, and `--tail=10` would return
 * every line written while the response was being sent.
 */
export async function* readCriLog(path: string, opts: ReadCriLogOptions = {}): AsyncGenerator<CriLogEntry> {
  if (opts.signal?.aborted) throw abortError(opts.signal.reason);
  const reader = new LineReader(await openLog(path, opts.signal));
  opts.opened?.();
  try {
    reader.end = (await reader.handle.stat()).size;
    const asm = new EntryAssembler(opts);
    for await (const e of readInitial(reader, asm, path, opts)) {
      if (opts.signal?.aborted) throw abortError(opts.signal.reason);
      yield e;
    }
  } finally {
    await reader.close();
  }
}

/**
 * Reads the file, then keeps yielding new lines as they are appended. Follows rotation (the file
 * replaced by a new one, or truncated) by reopening from the start. Ends when `isFinished` says so;
 * rejects with AbortError when the signal fires.
 */
export async function* followCriLog(path: string, opts: FollowCriLogOptions = {}): AsyncGenerator<CriLogEntry> {
  const pollMs = opts.pollMs ?? 250;
  const signal = opts.signal;
  if (signal?.aborted) throw abortError(signal.reason);
  const fh = await openLog(path, signal);
  opts.opened?.();
  let ino = (await fh.stat()).ino;
  const reader = new LineReader(fh);
  try {
    const asm = new EntryAssembler(opts);
    yield* readInitial(reader, asm, path, opts);
    for (;;) {
      if (signal?.aborted) throw abortError(signal.reason);
      const finished = opts.isFinished ? await opts.isFinished() : false;
      yield* readToEnd(reader, asm);
      if (finished) return;
      const rotated = await stat(path).then(
        (st) => st.ino !== ino || st.size < reader.position,
        () => false, // removed: keep reading the open file until isFinished or abort
      );
      if (rotated) {
        yield* readToEnd(reader, asm); // the tail of the old file
        const next = await open(path, 'r');
        ino = (await next.stat()).ino;
        await reader.reopen(next);
        continue;
      }
      await delay(pollMs, signal).catch((e: unknown) => {
        throw abortError(e);
      });
    }
  } finally {
    await reader.close();
  }
}
