import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CpuRates, nanoCores } from './cpu-rate.js';

const S = 1e9;

describe('usageNanoCores from two samples', () => {
  it('is the CPU time used per wall second, in nanocores', () => {
    assert.equal(nanoCores({ timeNs: 0, usageNs: 0 }, { timeNs: 10 * S, usageNs: 10 * S }), 1e9); // one core
    assert.equal(nanoCores({ timeNs: 0, usageNs: 0 }, { timeNs: 10 * S, usageNs: 5 * S }), 5e8); // half
    assert.equal(nanoCores({ timeNs: 5 * S, usageNs: 2 * S }, { timeNs: 15 * S, usageNs: 22 * S }), 2e9); // two cores
    assert.equal(nanoCores({ timeNs: 0, usageNs: 0 }, { timeNs: 3 * S, usageNs: 1 }), 0); // rounds to whole nanocores
  });

  it('gives no rate without a previous sample, when time did not move, or when the counter went back', () => {
    assert.equal(nanoCores(undefined, { timeNs: S, usageNs: S }), undefined);
    assert.equal(nanoCores({ timeNs: S, usageNs: 0 }, { timeNs: S, usageNs: S }), undefined);
    assert.equal(nanoCores({ timeNs: 0, usageNs: 5 * S }, { timeNs: S, usageNs: 0 }), undefined); // restarted
  });

  it('CpuRates keeps the previous sample per counter, repeats the rate for a cached sample, and prunes', () => {
    const r = new CpuRates();
    assert.equal(r.observe('a', { timeNs: 0, usageNs: 0 }), undefined);
    assert.equal(r.observe('b', { timeNs: 0, usageNs: 0 }), undefined);
    r.prune();
    assert.equal(r.observe('a', { timeNs: 2 * S, usageNs: S }), 5e8);
    // The runtime answered from its cache: same timestamp, same rate.
    assert.equal(r.observe('a', { timeNs: 2 * S, usageNs: S }), 5e8);
    r.prune(); // b was not seen this round
    assert.equal(r.size, 1);
    assert.equal(r.observe('b', { timeNs: 4 * S, usageNs: 4 * S }), undefined);
  });
});
