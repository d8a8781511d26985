import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import type { CommandRunner } from './exec.js';
import { TableMonitor } from './monitor.js';

/** A runner whose `nft monitor` prints what the test feeds it. */
function fakeMonitor(): { runner: CommandRunner; print: (...lines: string[]) => void; exit: (code: number) => void } {
  let onLine: ((l: string) => void) | undefined;
  let end: ((code: number) => void) | undefined;
  const runner: CommandRunner = {
    run: async () => ({ code: 0, stdout: '', stderr: '' }),
    stream: (_argv, o) => new Promise<number>((resolve) => {
      onLine = o.onLine;
      end = resolve;
    }),
  };
  return { runner, print: (...lines) => lines.forEach((l) => onLine!(l)), exit: (code) => end!(code) };
}

test('a batch on our table by another process is drift; our own batches and other tables are not; lost events are', async () => {
  const m = fakeMonitor();
  const drift: Array<{ pid: number; comm: string }> = [];
  let exits = 0;
  const mon = new TableMonitor({ runner: m.runner, table: 'nodelet-proxy', log: noopLogger, onDrift: (b) => drift.push(b), onExit: () => exits++ });
  mon.start();
  mon.own(100);
  m.print('add rule ip nodelet-proxy services ip daddr 10.96.0.5 accept', '# new generation 5 by process 100 (nft)');
  m.print('add table ip other', 'add rule ip other c accept', '# new generation 6 by process 200 (nft)');
  m.print('add table ip nodelet-proxy-2', '# new generation 7 by process 201 (nft)');
  assert.equal(drift.length, 0);
  m.print('delete rule ip nodelet-proxy services handle 4', '# new generation 8 by process 300 (nft)');
  assert.deepEqual(drift, [{ pid: 300, comm: 'nft' }]);
  m.print('add rule ip nodelet-proxy services counter', '# new generation 9 by process 100 (nft)');
  assert.equal(drift.length, 2, 'a process ID counts as ours for one batch only');
  m.print('# ERROR: We lost some netlink events!');
  assert.equal(drift.at(-1)!.comm, 'lost events');
  assert.ok(mon.running);
  m.exit(1);
  await new Promise((r) => setImmediate(r));
  assert.equal(mon.running, false);
  assert.equal(exits, 1);
  mon.close();
});
