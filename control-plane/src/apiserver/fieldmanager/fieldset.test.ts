// FieldSet.toFieldsV1 against the way it was written before it wrote into its output directly
// (a child's object copied behind `".": {}`, emptiness tested on each child's object): the text
// of every random set is the same, byte for byte (key order included), and the empty set is `{}`.
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

/** A small deterministic generator (the test is the same on every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
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
});
