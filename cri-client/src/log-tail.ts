/**
 * Where the last N lines of a CRI log file begin, found by reading the file backwards in
 * 64 KiB blocks (kubelet's findTailLineStartIndex does the same with raw lines). Memory stays at
 * two blocks whatever the file's size. A line here is an entry: records ending in `F`, so the
 * `P` records of a long line are not counted twice; with a stream filter only that stream counts.
 * An unterminated last line (a record being written) is not counted.
 *
 * Rotated files (`<log>.<yyyymmdd-hhmmss>`, the uncompressed ones) are older parts of the same
 * log: `tailSources` walks back through them while the newer files hold fewer than N lines.
 */
import { readdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { CriLogStream } from './logs.js';

const BLOCK = 64 * 1024;
/** Enough of a line for `<timestamp> <stream> <tag>` (RFC3339Nano is 35 bytes). */
const HEADER = 128;
const NL = 0x0a;

/** The line's stream and whether it ends an entry, from its first bytes. */
function header(bytes: Buffer): { stream: string; full: boolean } | undefined {
  const s = bytes.toString('latin1');
  const a = s.indexOf(' ');
  const b = a < 0 ? -1 : s.indexOf(' ', a + 1);
  if (b < 0) return undefined;
  const stream = s.slice(a + 1, b);
  const c = s.indexOf(' ', b + 1);
  const tag = (c < 0 ? s.slice(b + 1) : s.slice(b + 1, c)).split(':')[0];
  if (tag !== 'P' && tag !== 'F') return undefined;
  return { stream, full: tag === 'F' };
}

/**
 * The byte offset from which reading forward yields the last `want` entries of the file, and how
 * many entries there are from that offset (fewer than `want` when the file is short: offset 0).
 * `end` (default: the file's size now) is where the file is taken to end.
 */
export async function findTailStart(fh: FileHandle, want: number, stream: CriLogStream | 'all' = 'all', end?: number): Promise<{ offset: number; count: number }> {
  const size = end ?? (await fh.stat()).size;
  let block = Buffer.allocUnsafe(BLOCK);
  let later = Buffer.alloc(0); // the block read before this one, i.e. the bytes after it
  let pos = size;
  let lineEnd = -1; // the newline that ends the line currently being looked at (-1: none yet)
  let count = 0;
  const counts = (lineStart: number, blockStart: number, buf: Buffer): boolean => {
    if (lineEnd < 0) return false;
    const from = lineStart - blockStart;
    const head = Buffer.concat([buf.subarray(from, from + HEADER), later.subarray(0, Math.max(0, HEADER - (buf.length - from)))]).subarray(0, Math.min(HEADER, lineEnd - lineStart));
    const h = header(head);
    return !!h && h.full && (stream === 'all' || h.stream === stream);
  };
  while (pos > 0) {
    const len = Math.min(BLOCK, pos);
    pos -= len;
    const { bytesRead } = await fh.read(block, 0, len, pos);
    const buf = block.subarray(0, bytesRead);
    for (let i = buf.length - 1; i >= 0; i--) {
      if (buf[i] !== NL) continue;
      // The line after this newline starts at pos + i + 1 and ends at lineEnd.
      if (counts(pos + i + 1, pos, buf)) {
        count++;
        if (count > want) return { offset: lineEnd + 1, count: want };
      }
      lineEnd = pos + i;
    }
    // Keep this block as `later` for the next (earlier) one; swap buffers instead of copying.
    const spare = later.length === BLOCK ? later : Buffer.allocUnsafe(BLOCK);
    later = buf.length === BLOCK ? buf : Buffer.from(buf);
    block = spare;
  }
  // The first line of the file starts at 0.
  if (size > 0 && counts(0, 0, later)) count++;
  if (count > want) return { offset: lineEnd + 1, count: want };
  return { offset: 0, count };
}

/** The uncompressed rotated files of `path`, newest first. */
export async function rotatedLogs(path: string): Promise<string[]> {
  const base = basename(path);
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  return names
    .filter((n) => n.startsWith(`${base}.`) && /^\d{8}-\d{6}$/.test(n.slice(base.length + 1)))
    .sort()
    .reverse()
    .map((n) => join(dirname(path), n));
}
