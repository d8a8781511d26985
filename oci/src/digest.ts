import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
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
