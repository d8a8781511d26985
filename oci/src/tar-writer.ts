/**
 * A deterministic tar writer over the `tar` package's header and pax encoders. Every header is
 * ustar with mtime 0, the uid/gid the caller gives (default 0), empty uname/gname (the image's
 * /etc/passwd names the numbers) and the mode the caller gives (no umask);
 * names that do not fit ustar get a pax extended header (`path`, `linkpath`, `size`). The output
 * therefore depends only on the entries and their bytes, never on the machine or the clock.
 * Entries are written in the order given; sort them first (rootfs-tree.ts does).
 *
 *   entries ──▶ [pax header] ustar header ─ body ─ zero padding to 512 ─▶ … ─▶ two zero blocks
 *
 * Used for image layers (`buildImage`) and for image archives (`exportImages`).
 */
import { Header, Pax } from 'tar';
import { AgentError } from '@nodelet/base';

/** Numeric owner of an entry; 0 (root) when not given. */
export interface TarOwner {
  uid?: number;
  gid?: number;
}

export type TarEntry =
  | ({ type: 'dir'; path: string; mode: number } & TarOwner)
  | ({
      type: 'file';
      path: string;
      mode: number;
      size: number;
      /** The body; it must yield exactly `size` bytes. `what` names the source in errors. */
      open(signal?: AbortSignal): AsyncIterable<Uint8Array>;
      what?: string;
    } & TarOwner)
  | ({ type: 'symlink'; path: string; target: string } & TarOwner);

const BLOCK = 512;
const EPOCH = new Date(0);
const ZERO = Buffer.alloc(BLOCK * 2);
/** The largest id a ustar header holds (7 octal digits); larger ones would need a pax record. */
const MAX_ID = 0o7777777;
const isId = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= MAX_ID;
const TYPE = { dir: 'Directory', file: 'File', symlink: 'SymbolicLink' } as const;

/**
 * The tar stream of `entries` (paths relative, `/`-separated; directories may end in `/`, added
 * when missing). Streams file bodies; cancellation through `signal`.
 */
export async function* tarStream(entries: Iterable<TarEntry> | AsyncIterable<TarEntry>, signal?: AbortSignal): AsyncGenerator<Buffer> {
  for await (const e of entries) {
    signal?.throwIfAborted();
    const path = e.type === 'dir' && !e.path.endsWith('/') ? `${e.path}/` : e.path;
    if (path === '' || path.startsWith('/') || path.split('/').includes('..')) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `tar entry path "${e.path}" must be relative and stay inside the archive`);
    }
    const size = e.type === 'file' ? e.size : 0;
    const linkpath = e.type === 'symlink' ? e.target : undefined;
    const uid = e.uid ?? 0;
    const gid = e.gid ?? 0;
    if (!isId(uid) || !isId(gid)) throw new AgentError('ERR_INVALID_ARGUMENT', `tar entry "${e.path}": uid and gid must be integers from 0 to ${MAX_ID} (got ${uid}:${gid})`);
    const header = new Header({
      path,
      mode: e.type === 'symlink' ? 0o777 : e.mode & 0o7777,
      uid,
      gid,
      size,
      mtime: EPOCH,
      type: TYPE[e.type],
      linkpath: linkpath ?? '',
      uname: '',
      gname: '',
      devmaj: 0,
      devmin: 0,
    });
    if (header.encode()) {
      yield new Pax({ path, linkpath, size: e.type === 'file' ? size : undefined, mtime: EPOCH, uid, gid }).encode();
    }
    yield header.block!;
    if (e.type !== 'file') continue;
    let written = 0;
    for await (const chunk of e.open(signal)) {
      written += chunk.length;
      if (written > size) break;
      yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    }
    if (written !== size) {
      throw new AgentError('ERR_FAILED_PRECONDITION', `${e.what ?? `"${e.path}"`} changed while it was written to a tar: want ${size} bytes, read ${written}${written > size ? ' or more' : ''}`);
    }
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) yield ZERO.subarray(0, pad);
  }
  yield ZERO;
}
