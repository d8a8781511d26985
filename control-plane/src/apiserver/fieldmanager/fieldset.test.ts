// FieldSet.toFieldsV1 and removeRecursive against the ways they were written before (toFieldsV1
// copied a child's object behind `".": {}` and tested each child's object for keys; the removal
// of unowned fields built a new set, copying what it kept): for random sets the FieldsV1 text is
// the same byte for byte (key order included), and so are the member paths after a removal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Json } from '../object.js';
import { FieldSet, type PathElement } from './fieldset.js';

const KIND_ORDER: Readonly<Record<string, number>> = { f: 0, k: 1, v: 2, i: 3 };
const byKind = (a: string, b: string): number => (KIND_ORDER[a[0] ?? ''] ?? 9) - (KIND_ORDER[b[0] ?? ''] ?? 9) || (a < b ? -1 : a > b ? 1 : 0);

/** The earlier form, as the oracle. */
function referenceFieldsV1(s: FieldSet): Json {
  const out: Json = {};
  const pes = [...new Set([...s.members, ...s.children.keys()])].sort(byKind);
  for (const pe of pes) {
    const c = s.children.get(pe);
    const sub = c ? referenceFieldsV1(c) : undefined;
    const nonEmpty = sub !== undefined && Object.keys(sub).length > 0;
    if (nonEmpty && s.members.has(pe)) out[pe] = { '.': {}, ...sub };
    else if (nonEmpty) out[pe] = sub;
    else if (s.members.has(pe)) out[pe] = {};
  }
  return out;
}

/** The earlier removal (a new set), as the oracle. */
function referenceRemoval(s: FieldSet, o: FieldSet): FieldSet {
  const out = new FieldSet();
  for (const m of s.members) if (!o.members.has(m)) out.members.add(m);
  for (const [pe, c] of s.children) {
    if (o.members.has(pe)) continue;
    const oc = o.children.get(pe);
    const d = oc ? referenceRemoval(c, oc) : c.clone();
    if (!d.empty()) out.children.set(pe, d);
  }
  return out;
}

/** A small deterministic generator (the test is the same on every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

function randomSet(next: () => number, elements: readonly PathElement[], maxPaths: number): FieldSet {
  const set = new FieldSet();
  const paths = Math.floor(next() * maxPaths);
  for (let i = 0; i < paths; i++) {
    const depth = 1 + Math.floor(next() * 4);
    set.insert(Array.from({ length: depth }, () => elements[Math.floor(next() * elements.length)]!));
  }
  return set;
}

const ELEMENTS: PathElement[] = ['f:a', 'f:b', 'f:Z', 'f:0', 'k:{"name":"c"}', 'k:{"name":"a"}', 'v:"x"', 'v:1', 'i:0', 'i:10', 'i:2', 'x:odd', ''];

test('toFieldsV1 writes what the earlier form wrote, for random sets with members, children, empty children and every element kind', () => {
  const next = random(28);
  for (let round = 0; round < 500; round++) {
    const set = new FieldSet();
    const paths = Math.floor(next() * 12);
    for (let i = 0; i < paths; i++) {
      const depth = 1 + Math.floor(next() * 4);
      set.insert(Array.from({ length: depth }, () => ELEMENTS[Math.floor(next() * ELEMENTS.length)]!));
    }
    // Empty children (left behind by set operations) write nothing.
    if (next() < 0.3) set.child('f:empty').child('f:deeper');
    assert.equal(JSON.stringify(set.toFieldsV1()), JSON.stringify(referenceFieldsV1(set)), `round ${round}`);
  }
  assert.equal(JSON.stringify(new FieldSet().toFieldsV1()), '{}');
  // A level with more elements than the short-array sort takes, of every kind.
  const wide = new FieldSet();
  for (let i = 0; i < 40; i++) wide.insert([ELEMENTS[(i * 7) % ELEMENTS.length]!.replace(/^(.:)/, `$1${i % 5}`), `f:${(i * 13) % 17}`]);
  assert.equal(JSON.stringify(wide.toFieldsV1()), JSON.stringify(referenceFieldsV1(wide)));
});

test('removeRecursive leaves the members, paths and FieldsV1 the earlier removal gave, and keeps the removed set as it was', () => {
  const next = random(1);
  const few: PathElement[] = ['f:a', 'f:b', 'k:{"name":"c"}', 'v:"x"', 'i:0'];
  for (let round = 0; round < 1000; round++) {
    const set = randomSet(next, few, 10);
    const remove = randomSet(next, few, 4);
    const removeBefore = JSON.stringify([...remove.paths()]);
    const expected = referenceRemoval(set, remove);
    const got = set.removeRecursive(remove);
    assert.equal(got, set, 'in place');
    assert.deepEqual([...got.paths()], [...expected.paths()], `round ${round}`);
    assert.equal(JSON.stringify(got.toFieldsV1()), JSON.stringify(expected.toFieldsV1()), `round ${round}`);
    assert.ok(got.equals(expected) && got.empty() === expected.empty(), `round ${round}`);
    assert.equal(JSON.stringify([...remove.paths()]), removeBefore, 'the removed set is not changed');
  }
});
