import { AgentError } from '@nodelet/base';

/**
 * The exclusive end of the byte range holding every key that starts with `prefix` (etcd's
 * `range_end` for a prefix): the prefix with its last byte incremented, dropping trailing 0xff
 * bytes. An empty result means "no upper bound" (etcd encodes that as a single zero byte).
 */
export function prefixRangeEnd(prefix: Uint8Array): Uint8Array {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return new Uint8Array(0);
}

/**
 * The same bound for string keys that SQLite compares as UTF-8 bytes. UTF-8 keeps code-point
 * order, so incrementing the last code point (not byte, which could leave invalid UTF-8) gives
 * the smallest string above every key with this prefix. Undefined = no upper bound.
 */
export function prefixRangeEndString(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      points.push(last === 0xd7ff ? 0xe000 : last + 1); // skip the surrogate block
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}

/** Rejects keys the stores cannot hold. Keys are `/registry/...` paths, never empty. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'storage key must be a non-empty string');
  }
}

/** Rejects revisions that are not non-negative safe integers (both stores use int64 ids). */
export function checkRevision(name: string, rev: number): void {
  if (!Number.isSafeInteger(rev) || rev < 0) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${String(rev)}`);
  }
}
