import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { MachineInfoCache } from './machine-info-cache.js';
import type { MachineInfo } from './machine-info.js';

const facts = (cpuCores: number): MachineInfo => ({
  cpuCores, memoryBytes: 1, ephemeralStorageBytes: 1, machineID: 'm', systemUUID: 'u', bootID: 'b', kernelVersion: 'k', osImage: 'o', architecture: 'amd64', hostname: 'h',
});

test('machine facts: one read shared by concurrent callers, then refreshed in the background; a failed refresh keeps the last facts', async () => {
  const clock = new FakeClock();
  const reads: Array<MachineInfo | Error> = [facts(2), new Error('boom'), facts(4)];
  let calls = 0;
  const cache = new MachineInfoCache({ rootDir: '/', clock, log: noopLogger, refreshMs: 60_000, read: async () => {
    const r = reads[calls++]!;
    if (r instanceof Error) throw r;
    return r;
  } });
  const [a, b] = await Promise.all([cache.load(), cache.load()]);
  assert.equal(calls, 1);
  assert.equal(a, b);
  const stop = new AbortController();
  cache.start(stop.signal);
  clock.advance(60_000);
  await new Promise((r) => setImmediate(r));
  assert.equal(cache.current!.cpuCores, 2, 'failed refresh keeps the last facts');
  clock.advance(60_000);
  await new Promise((r) => setImmediate(r));
  assert.equal(cache.current!.cpuCores, 4);
  stop.abort();
  assert.equal(clock.pendingTimers, 0);
});
