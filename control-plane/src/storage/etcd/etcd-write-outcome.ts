/**
 * What became of a write transaction whose reply was lost.
 *
 * When the connection drops (or the deadline passes) after a txn was sent, etcd may have
 * applied it, may apply it later (the proposal can still be in the raft log), or may never
 * apply it. Sending it again blindly — what the etcd3 client's default retry policy does —
 * turns "our first attempt committed" into a false ERR_CONFLICT / ERR_ALREADY_EXISTS, because
 * the guard the second attempt checks was falsified by the first. Instead the store reads the
 * key's history and decides, from evidence only:
 *
 *   attempt ──reply──▶ done (definite)
 *      │ no reply (connection error, deadline)
 *      ▼
 *   resolveWriteOutcome(intent, history)
 *      ├─ applied      the key's first change after the guard is exactly our write → success
 *      ├─ rejected     another write changed the key first; our guard can never hold again
 *      ├─ not-applied  the key is still exactly as the guard expects → safe to send again
 *      └─ unknown      anything else (key deleted since, history compacted, etcd unreachable)
 *                      → ERR_UNAVAILABLE "outcome unknown"; the caller re-reads
 *
 * Why each answer is safe:
 * - not-applied: every txn here is guarded by a compare its own effect falsifies (create:
 *   "absent"; update/delete: "mod_revision == expected"; unguarded delete: "exists", only sent
 *   again while the key is the incarnation that existed before the first send). So the first
 *   attempt and the re-send can never both apply; if the first one lands after all, the re-send
 *   fails its guard and is resolved again here, finding the first.
 * - applied: etcd's mod_revision is unique per write, so "the version just before the current
 *   chain link had mod_revision == expected, and the link's value is byte-for-byte ours" means
 *   the first write after `expected` stored exactly our value. The one thing this cannot tell
 *   apart is a concurrent writer storing identical bytes with the same guard; then the store's
 *   history is exactly what it would be had ours won, so success loses nothing and reports no
 *   state the store does not hold (API objects carry uid/managedFields, so this is rare anyway).
 * - A create is "applied" only if the key's current incarnation was created after the last
 *   revision this client had seen before sending (`floor`) and its first value is ours.
 * - Deletes are never resolved to "applied": a tombstone cannot be read back by revision, so a
 *   delete whose key is gone is "unknown". That costs a 503 the client retries (and then gets
 *   404), never a wrong answer.
 *
 * Resolution reads are linearizable (etcd's default), so they see every write acknowledged to
 * anyone before them.
 */
import { hasCode } from '@nodelet/base';
import type { IKeyValue } from 'etcd3';

export type WriteIntent =
  | { op: 'create'; value: Uint8Array }
  | { op: 'update'; value: Uint8Array; expected: number }
  | { op: 'delete'; expected?: number };

export type WriteOutcome =
  | { kind: 'applied'; revision: number }
  | { kind: 'rejected'; current: IKeyValue | undefined }
  | { kind: 'not-applied' }
  | { kind: 'unknown'; why: string };

/** Reads of one key; `revision` 0/undefined means "now". Throws ERR_GONE once compacted. */
export interface KeyHistory {
  at(revision?: number): Promise<IKeyValue | undefined>;
}

/** How many versions back the update/delete resolution walks before giving up. */
const MAX_WALK = 16;

/**
 * Decides what became of `intent` (see the file comment). `floor` is the highest revision the
 * client had seen before the first send. Never throws: a failed read is an `unknown` outcome.
 */
export async function resolveWriteOutcome(intent: WriteIntent, history: KeyHistory, floor: number): Promise<WriteOutcome> {
  try {
    const current = await history.at();
    switch (intent.op) {
      case 'create':
        return await resolveCreate(intent.value, current, history, floor);
      case 'update':
        return await resolveGuarded(current, intent.expected, history, (first) => sameBytes(first.value, intent.value));
      case 'delete':
        if (intent.expected !== undefined) return await resolveGuarded(current, intent.expected, history, () => false);
        if (!current) return unknown('the key is gone: deleted by this write or another');
        return Number(current.create_revision) <= floor ? { kind: 'not-applied' } : unknown('the key was re-created since the delete was sent');
    }
  } catch (err) {
    return unknown(hasCode(err, 'ERR_GONE') ? 'the key history has been compacted' : `reading the key failed: ${(err as Error).message}`);
  }
}

async function resolveCreate(value: Uint8Array, current: IKeyValue | undefined, history: KeyHistory, floor: number): Promise<WriteOutcome> {
  if (!current) return unknown('the key is absent: the create has not applied yet, or applied and was deleted since');
  const created = Number(current.create_revision);
  if (created <= floor) return { kind: 'rejected', current }; // existed before we sent
  const first = current.version === '1' ? current : await history.at(created);
  if (first && sameBytes(first.value, value)) return { kind: 'applied', revision: created };
  return unknown('the key was created by another write; an earlier create may have been deleted since');
}

/**
 * Update or delete guarded by `mod_revision == expected`: walks the key's versions back from
 * now to the first one written after `expected`, and asks `isOurs` about it.
 */
async function resolveGuarded(current: IKeyValue | undefined, expected: number, history: KeyHistory, isOurs: (first: IKeyValue) => boolean): Promise<WriteOutcome> {
  if (!current) return unknown('the key is gone: deleted after or instead of this write');
  if (Number(current.mod_revision) === expected) return { kind: 'not-applied' };
  let link = current;
  for (let step = 0; step < MAX_WALK; step++) {
    const mod = Number(link.mod_revision);
    if (mod < expected) return { kind: 'rejected', current }; // `expected` never was a version of this key
    const before = await history.at(mod - 1);
    if (!before || before.create_revision !== link.create_revision) {
      // `link` starts a new incarnation: the key was deleted and re-created after `expected`.
      return unknown('the key was deleted and re-created since the write was sent');
    }
    if (Number(before.mod_revision) <= expected) {
      if (Number(before.mod_revision) < expected) return { kind: 'rejected', current };
      return isOurs(link) ? { kind: 'applied', revision: mod } : { kind: 'rejected', current };
    }
    link = before;
  }
  return unknown(`more than ${MAX_WALK} writes to the key since the write was sent`);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}

function unknown(why: string): WriteOutcome {
  return { kind: 'unknown', why };
}
