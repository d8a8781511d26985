import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describePlan, FAULT_KINDS, generatePlan, profileFor } from './plan.js';
import { createRng, parseSeed } from './rng.js';

test('the same seed gives the same plan; another seed another one', () => {
  const p = profileFor('default');
  assert.equal(describePlan(generatePlan(42, p)), describePlan(generatePlan(42, p)));
  assert.notEqual(describePlan(generatePlan(42, p)), describePlan(generatePlan(43, p)));
});

test('a default run deals every fault kind at least once, never one kind twice in a round', () => {
  for (const seed of [0, 1, 7, 123456, 0xffff_ffff]) {
    const rounds = generatePlan(seed, profileFor('default'));
    assert.equal(rounds.length, 6);
    const dealt = new Set(rounds.flatMap((r) => r.faults.map((f) => f.kind)));
    assert.deepEqual([...dealt].sort(), [...FAULT_KINDS].sort(), `seed ${seed}`);
    for (const r of rounds) assert.equal(new Set(r.faults.map((f) => f.kind)).size, r.faults.length);
  }
});

test('smoke keeps to the quick faults; --rounds overrides the count', () => {
  const rounds = generatePlan(5, profileFor('smoke'));
  assert.equal(rounds.length, 2);
  for (const f of rounds.flatMap((r) => r.faults)) assert.ok(['agent-kill-burst', 'cni-crash', 'server-kill', 'containerd-kill'].includes(f.kind), f.kind);
  assert.equal(generatePlan(5, profileFor('long', 3)).length, 3);
});

test('churn stays in bounds and deletes only pods it created', () => {
  const created = new Set<string>();
  for (const r of generatePlan(99, profileFor('long'))) {
    for (const a of r.churn) {
      if (a.op === 'scale' && a.deployment === 'web') assert.ok(a.replicas >= 0 && a.replicas <= 30);
      if (a.op === 'create-pod') created.add(a.name);
      if (a.op === 'delete-pod') assert.ok(created.delete(a.name), `${a.name} deleted before it was created`);
    }
    for (const f of r.faults) if ('burst' in f) assert.ok(f.burst > 0 && f.burst <= 20);
  }
});

test('seeds: parsed strictly; the generator is uniform enough to pick every element', () => {
  assert.equal(parseSeed('4294967295'), 0xffff_ffff);
  assert.throws(() => parseSeed('-1'), /--seed must be an integer/);
  assert.throws(() => parseSeed('4294967296'), /--seed/);
  const rng = createRng(1);
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) seen.add(rng.int(0, 9));
  assert.equal(seen.size, 10);
});
