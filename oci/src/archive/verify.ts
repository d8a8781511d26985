/**
 * Checks shared by the two archive formats: blob lookup with size checks, layer compression by
 * magic bytes, JSON documents read with a size cap, and a layer's diff_id (the digest of the
 * uncompressed tar) compared with the image config.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { AgentError } from '@nodelet/base';
import { type Descriptor, LAYER_MEDIA_TYPES } from '../media-types.js';
import type { StoreName } from '../store-name.js';
import type { ArchiveContents, StagedFile } from './read-archive.js';

export type Compression = 'tar' | 'gzip' | 'zstd';

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const JSON_MAX = 16 << 20;

export function corrupt(why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `corrupt or unsupported image archive: ${why}`);
}

/** How a layer blob is compressed, from its first bytes. */
export function compressionOf(head: Buffer): Compression {
  if (head.subarray(0, 2).equals(GZIP_MAGIC)) return 'gzip';
  if (head.subarray(0, 4).equals(ZSTD_MAGIC)) return 'zstd';
  return 'tar';
}

/** The compression a layer media type declares, or undefined for a type nodelet does not know. */
export function compressionOfMediaType(mediaType: string): Compression | undefined {
  for (const c of ['tar', 'gzip', 'zstd'] as const) if (LAYER_MEDIA_TYPES[c].includes(mediaType)) return c;
  return undefined;
}

/** Staged files by digest (a blob stored under several paths counts once). */
export function byDigest(c: ArchiveContents): Map<string, StagedFile> {
  const m = new Map<string, StagedFile>();
  for (const f of c.files.values()) if (!m.has(f.digest)) m.set(f.digest, f);
  return m;
}

/** The staged member at archive path `path`, following symlinks and hard links. */
export function lookupPath(c: ArchiveContents, path: string): StagedFile | undefined {
  let p = path.replace(/^(\.\/)+/, '');
  for (let hops = 0; hops < 16; hops++) {
    const f = c.files.get(p);
    if (f) return f;
    const next = c.links.get(p);
    if (next === undefined) return undefined;
    p = next;
  }
  return undefined;
}

/** The staged blob `d` names; its size must match. `what` names the blob (with its digest) in errors. */
export function blobOf(blobs: Map<string, StagedFile>, d: Descriptor, what: string): StagedFile {
  const f = blobs.get(d.digest);
  if (!f) throw corrupt(`${what} is not in the archive`);
  if (f.size !== d.size) throw corrupt(`${what} is ${f.size} bytes, but its descriptor says ${d.size}`);
  return f;
}

/** A top-level JSON document of the archive (`index.json`, `manifest.json`). */
export function parseDoc<T>(bytes: Buffer, what: string): T {
  try {
    const v = JSON.parse(bytes.toString('utf8')) as unknown;
    if (!v || typeof v !== 'object') throw new Error('not a JSON object');
    return v as T;
  } catch (err) {
    throw corrupt(`${what} is not valid JSON (${(err as Error).message})`);
  }
}

/** A staged JSON document (manifest, index, config), size-capped. */
export async function readJson<T>(f: StagedFile, what: string): Promise<{ value: T; bytes: Buffer }> {
  if (f.size > JSON_MAX) throw corrupt(`${what} is ${f.size} bytes, too large for a JSON document`);
  const bytes = await readFile(f.file);
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as T, bytes };
  } catch (err) {
    throw corrupt(`${what} is not valid JSON (${(err as Error).message})`);
  }
}

/**
 * Compares a layer's uncompressed digest with `want` (the config's diff_id). Uncompressed and
 * gzip layers are checked here; zstd layers are not (Node 20 has no zstd decoder), containerd
 * checks them when it unpacks the layer.
 */
export async function verifyDiffId(f: StagedFile, compression: Compression, want: string | undefined, what: string, signal?: AbortSignal): Promise<void> {
  if (typeof want !== 'string') throw corrupt(`the image config has no diff_id for ${what}`);
  let got: string;
  if (compression === 'tar') got = f.digest;
  else if (compression === 'gzip') {
    const hash = createHash('sha256');
    try {
      await pipeline(createReadStream(f.file, { signal }), createGunzip(), async (chunks: AsyncIterable<Buffer>) => {
        for await (const c of chunks) hash.update(c);
      }, { signal });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw corrupt(`${what} is not valid gzip (${(err as Error).message})`);
    }
    got = 'sha256:' + hash.digest('hex');
  } else return;
  if (got !== want) throw corrupt(`${what} unpacks to ${got}, but the image config's diff_id is ${want}`);
}

/** An image found in an archive and verified, ready to be committed to a store. */
export interface ArchiveImage {
  /** The tags the archive gives it, as store names (store-name.ts). */
  names: StoreName[];
  manifest: Descriptor;
  /** The manifest's bytes when the importer wrote it (a docker save has none); else a staged blob. */
  manifestBody?: Buffer;
  /** Digests of the staged blobs the image needs (manifest, config, layers). */
  blobs: string[];
}
