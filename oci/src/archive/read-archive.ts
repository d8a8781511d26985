/**
 * One streaming pass over an image archive (`docker save` or an OCI image-layout tar, optionally
 * gzip-compressed as a whole): every regular file is copied into a staging directory while it is
 * hashed, so no layer is ever held in memory; the small top-level documents (`index.json`,
 * `manifest.json`, `oci-layout`, `repositories`) are kept in memory, size-capped. A member under
 * `blobs/sha256/` whose content does not hash to its name stops the pass at once.
 *
 *   archive ──tar Parser──▶ entry ──hashToFile──▶ <staging>/<n>   {digest, size, head}
 *                              └──▶ top-level JSON (≤ 16 MiB)      links: path → target
 */
import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import { once } from 'node:events';
import { type ReadEntry, Parser } from 'tar';
import { AgentError, linkAbort } from '@nodelet/base';
import { hashToFile } from '../digest.js';

/** A member copied to the staging directory. */
export interface StagedFile {
  /** Path of the staged copy. */
  file: string;
  digest: string;
  size: number;
  /** The first bytes, to tell tar from gzip from zstd. */
  head: Buffer;
}

export interface ArchiveContents {
  /** Regular members by normalised archive path (`blobs/sha256/…`, `<id>/layer.tar`). */
  files: Map<string, StagedFile>;
  /** Symlink and hard-link members: normalised path → normalised target path. */
  links: Map<string, string>;
  /** Top-level documents by name. */
  docs: Map<string, Buffer>;
}

export const TOP_LEVEL_DOCS: ReadonlySet<string> = new Set(['index.json', 'manifest.json', 'oci-layout', 'repositories']);
const DOC_MAX = 16 << 20;
const BLOB_PATH = /^blobs\/sha256\/([a-f0-9]{64})$/;

/** Reads `archive`, staging its files under `staging` (an existing, empty directory). */
export async function readArchive(archive: string, staging: string, signal?: AbortSignal): Promise<ArchiveContents> {
  const out: ArchiveContents = { files: new Map(), links: new Map(), docs: new Map() };
  let n = 0;
  let failure: unknown;
  const pending: Promise<void>[] = [];
  // Stops the copies of entries the parser will never finish once anything has failed: one
  // listener for the archive destroys every entry still being read (which rejects its copy), not
  // one listener per entry, however many small entries are in flight at once.
  const stop = linkAbort(signal);
  const reading = new Set<ReadEntry>();
  const destroyReading = (): void => {
    for (const e of reading) e.destroy();
  };
  stop.signal.addEventListener('abort', destroyReading, { once: true });
  const track = <T>(entry: ReadEntry, p: () => Promise<T>): Promise<T> => {
    reading.add(entry);
    return p().finally(() => reading.delete(entry));
  };
  const fail = (err: unknown): void => {
    if (failure !== undefined) return;
    failure = err;
    stop.controller.abort(err);
    parser.abort(err instanceof Error ? err : new Error(String(err)));
  };

  const onEntry = (entry: ReadEntry): void => {
    if (failure !== undefined || stop.signal.aborted) return void entry.resume();
    const path = normalise(entry.path);
    switch (entry.type) {
      case 'File':
      case 'OldFile':
      case 'ContiguousFile':
        break;
      case 'SymbolicLink':
        if (path && entry.linkpath) out.links.set(path, normalise(entry.linkpath.startsWith('/') ? entry.linkpath : posix.join(posix.dirname(path), entry.linkpath)));
        return void entry.resume();
      case 'Link':
        if (path && entry.linkpath) out.links.set(path, normalise(entry.linkpath));
        return void entry.resume();
      default:
        return void entry.resume(); // directories and anything else carry no image content
    }
    if (TOP_LEVEL_DOCS.has(path)) {
      pending.push(track(entry, () => readDoc(entry, path)).then((b) => void out.docs.set(path, b)).catch((err: unknown) => fail(stop.signal.aborted ? stop.signal.reason : err)));
      return;
    }
    const file = `${staging}/${n++}`;
    pending.push(
      track(entry, () => hashToFile(entry, file)).then((staged) => {
        const named = BLOB_PATH.exec(path);
        if (named && staged.digest !== `sha256:${named[1]}`) {
          throw new AgentError('ERR_INVALID_ARGUMENT', `corrupt archive: member "${path}" hashes to ${staged.digest}, not to its name`);
        }
        out.files.set(path, { file, ...staged });
      }).catch((err: unknown) => fail(stop.signal.aborted ? stop.signal.reason : err)),
    );
  };

  const parser = new Parser({ strict: true, onReadEntry: onEntry });
  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', (err: Error) => reject(failure ?? err));
  });
  done.catch(() => undefined); // only marks it observed: it is awaited below
  try {
    for await (const chunk of createReadStream(archive, { signal }) as AsyncIterable<Buffer>) {
      if (failure !== undefined) break;
      if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), done]);
    }
    if (failure === undefined) parser.end();
    await done;
  } catch (err) {
    fail(err);
  }
  await Promise.allSettled(pending);
  stop.signal.removeEventListener('abort', destroyReading);
  stop.dispose();
  if (failure !== undefined) throw describe(archive, failure);
  return out;
}

/** `./a//b/` → `a/b`; leading `/` dropped. */
function normalise(p: string): string {
  const n = posix.normalize(`/${p}`).slice(1);
  return n.endsWith('/') ? n.slice(0, -1) : n;
}

async function readDoc(entry: ReadEntry, path: string): Promise<Buffer> {
  if (entry.size > DOC_MAX) {
    entry.resume();
    throw new AgentError('ERR_INVALID_ARGUMENT', `"${path}" in the archive is ${entry.size} bytes, more than the ${DOC_MAX} a ${path} may have`);
  }
  return entry.concat();
}

function describe(archive: string, err: unknown): unknown {
  if (err instanceof AgentError || (err as Error).name === 'AbortError') return err;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT' && e.path === archive) return new AgentError('ERR_NOT_FOUND', `image archive "${archive}" does not exist`, { cause: err });
  return new AgentError('ERR_INVALID_ARGUMENT', `"${archive}" is not a readable tar archive: ${e.message}`, { cause: err });
}
