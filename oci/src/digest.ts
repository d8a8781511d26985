import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { AgentError } from '@nodelet/base';

/** `sha256:` + 64 lower-case hex digits; the only algorithm nodelet writes or accepts. */
const DIGEST_RE = /^sha256:[a-f0-9]{64}$/;

export function isDigest(s: string): boolean {
  return DIGEST_RE.test(s);
}

/** Throws ERR_INVALID_ARGUMENT naming the digest when it is not a sha256 digest. */
export function assertDigest(s: string): string {
  if (!DIGEST_RE.test(s)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid digest "${s}": want "sha256:" followed by 64 lower-case hex digits`);
  }
  return s;
}

export function sha256Digest(data: string | Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(data).digest('hex');
}

/** Digest and size of a file, streamed (layers can be large). */
export async function digestFile(path: string, signal?: AbortSignal): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path, { signal }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { digest: 'sha256:' + hash.digest('hex'), size };
}

/** The hex part of a digest (the blob's file name in an OCI layout). */
export function digestHex(digest: string): string {
  return assertDigest(digest).slice('sha256:'.length);
}

/** Bytes kept from the start of a stream by hashToFile (enough for the gzip and zstd magic). */
const HEAD_BYTES = 8;

/**
 * Streams `source` into the new file `dest` (created exclusively), hashing on the way: digest,
 * size and the first bytes (to sniff compression) without holding the content in memory. On
 * failure `dest` may be left partly written; the caller owns its removal.
 */
export async function hashToFile(source: AsyncIterable<Uint8Array>, dest: string, signal?: AbortSignal): Promise<{ digest: string; size: number; head: Buffer }> {
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Uint8Array>) {
      for await (const c of chunks) {
        hash.update(c);
        size += c.length;
        if (head.length < HEAD_BYTES) head = Buffer.concat([head, Buffer.from(c.subarray(0, HEAD_BYTES - head.length))]);
        yield c;
      }
    },
    createWriteStream(dest, { flags: 'wx' }),
    { signal },
  );
  return { digest: 'sha256:' + hash.digest('hex'), size, head };
}
