import assert from 'node:assert/strict';
import type { Store, WatchEvent } from '../types.js';

export type MakeStore = () => Promise<Store>;

export const enc = (s: string): Uint8Array => Buffer.from(s, 'utf8');
export const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

/** Asserts that `p` rejects with an AgentError carrying `code`. */
export async function rejectsWithCode(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected ${code}, got ${String(err)}`);
    return true;
  });
}

/** A compact, comparable view of an event. */
export function summarize(e: WatchEvent): string {
  const prev = e.prevKv ? ` prev=${dec(e.prevKv.value)}@${e.prevKv.modRevision}` : '';
  return `${e.type}${e.isCreate ? '+' : ''} ${e.kv.key}=${dec(e.kv.value)}@${e.revision}${prev}`;
}

/**
 * Reads exactly `n` events from a watch, failing with what arrived so far if they do not come
 * within `timeoutMs`. The watch is stopped afterwards.
 */
export async function takeEvents(
  store: Store,
  prefix: string,
  afterRevision: number,
  n: number,
  opts: { timeoutMs?: number; onStarted?: () => Promise<void> } = {},
): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const got: WatchEvent[] = [];
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 5000);
  try {
    const iter = store.watch(prefix, { afterRevision, signal: ac.signal })[Symbol.asyncIterator]();
    const first = iter.next();
    await opts.onStarted?.();
    for (let r = await first; !r.done; r = await iter.next()) {
      got.push(r.value);
      if (got.length === n) break;
    }
    await iter.return?.();
  } finally {
    clearTimeout(timer);
  }
  assert.equal(got.length, n, `expected ${n} events, got ${got.length}: ${got.map(summarize).join(' | ')}`);
  return got;
}

