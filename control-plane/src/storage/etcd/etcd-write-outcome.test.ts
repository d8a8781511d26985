import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentError } from '@nodelet/base';
import type { IKeyValue } from 'etcd3';
import { resolveWriteOutcome, type KeyHistory, type WriteIntent } from './etcd-write-outcome.js';

/** One key's MVCC history: `[revision, value]` puts and `[revision, null]` deletes, in order. */
function history(events: Array<[number, string | null]>, compactedBelow = 0): KeyHistory {
  return {
    async at(revision) {
      const upTo = revision || Infinity;
      if (revision && revision < compactedBelow) throw new AgentError('ERR_GONE', 'compacted');
      let kv: IKeyValue | undefined;
      for (const [rev, value] of events) {
        if (rev > upTo) break;
        if (value === null) {
          kv = undefined;
          continue;
        }
        kv = {
          key: Buffer.from('k'),
          value: Buffer.from(value),
          create_revision: kv ? kv.create_revision : String(rev),
          mod_revision: String(rev),
          version: String(kv ? Number(kv.version) + 1 : 1),
          lease: '0',
        };
      }
      return kv;
    },
  };
}

const v = (s: string): Uint8Array => Buffer.from(s);
const update = (value: string, expected: number): WriteIntent => ({ op: 'update', value: v(value), expected });
const kinds = async (intent: WriteIntent, h: KeyHistory, floor = 0): Promise<string> => (await resolveWriteOutcome(intent, h, floor)).kind;

describe('resolveWriteOutcome', () => {
  it('update: our value as the first change after the expected revision is applied, at its revision', async () => {
    assert.deepEqual(await resolveWriteOutcome(update('mine', 5), history([[5, 'old'], [9, 'mine']]), 5), { kind: 'applied', revision: 9 });
    // Later writes on top do not hide it: the walk goes back to the first change after 5.
    assert.deepEqual(await resolveWriteOutcome(update('mine', 5), history([[5, 'old'], [9, 'mine'], [12, 'theirs'], [14, 'x']]), 5), { kind: 'applied', revision: 9 });
  });

  it('update: the key still at the expected revision is not applied (safe to send again)', async () => {
    assert.equal(await kinds(update('mine', 5), history([[5, 'old']])), 'not-applied');
  });

  it('update: another value first is a definite conflict; a deleted or compacted key is unknown', async () => {
    const rejected = await resolveWriteOutcome(update('mine', 5), history([[5, 'old'], [7, 'theirs'], [9, 'mine']]), 5);
    assert.equal(rejected.kind, 'rejected');
    assert.equal(rejected.kind === 'rejected' && rejected.current?.mod_revision, '9');
    assert.equal(await kinds(update('mine', 5), history([[5, 'old'], [9, 'mine'], [10, null]])), 'unknown');
    assert.equal(await kinds(update('mine', 5), history([[5, 'old'], [9, null], [11, 'mine']])), 'unknown', 're-created since');
    assert.equal(await kinds(update('mine', 5), history([[5, 'old'], [9, 'mine'], [12, 'x']], 10)), 'unknown', 'compacted');
    assert.equal(await kinds(update('mine', 6), history([[5, 'old'], [9, 'x']])), 'rejected', '6 never was a version');
  });

  it('update: a long chain of later writes is unknown rather than an unbounded walk', async () => {
    const events: Array<[number, string]> = [[5, 'old'], [6, 'mine']];
    for (let r = 7; r < 40; r++) events.push([r, `w${r}`]);
    assert.equal(await kinds(update('mine', 5), history(events)), 'unknown');
  });

  it('create: our value created after the floor is applied; created before the floor is rejected', async () => {
    const create: WriteIntent = { op: 'create', value: v('mine') };
    assert.deepEqual(await resolveWriteOutcome(create, history([[8, 'mine'], [9, 'later']]), 5), { kind: 'applied', revision: 8 });
    assert.equal(await kinds(create, history([[3, 'mine']]), 5), 'rejected', 'existed before the send');
    assert.equal(await kinds(create, history([[8, 'theirs']]), 5), 'unknown');
    assert.equal(await kinds(create, history([]), 5), 'unknown', 'absent: not applied yet or applied and deleted');
  });

  it('delete: never proven applied; provably not applied while the key is as expected', async () => {
    assert.equal(await kinds({ op: 'delete', expected: 5 }, history([[5, 'old']])), 'not-applied');
    assert.equal(await kinds({ op: 'delete', expected: 5 }, history([[5, 'old'], [6, null]])), 'unknown');
    assert.equal(await kinds({ op: 'delete', expected: 5 }, history([[5, 'old'], [7, 'theirs']])), 'rejected');
    assert.equal(await kinds({ op: 'delete' }, history([[3, 'old']]), 5), 'not-applied', 'same incarnation as before the send');
    assert.equal(await kinds({ op: 'delete' }, history([[7, 'new']]), 5), 'unknown', 're-created after the send');
    assert.equal(await kinds({ op: 'delete' }, history([]), 5), 'unknown');
  });

  it('a failing read is an unknown outcome, not an exception', async () => {
    const broken: KeyHistory = { at: () => Promise.reject(new AgentError('ERR_UNAVAILABLE', 'down')) };
    const out = await resolveWriteOutcome(update('mine', 5), broken, 5);
    assert.equal(out.kind, 'unknown');
    assert.match(out.kind === 'unknown' ? out.why : '', /down/);
  });
});
