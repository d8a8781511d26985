import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceDrift } from './agent-usage.js';
import { awaitsGc } from './invariants.js';
import { SoakReport } from './report.js';

test('leftovers for the agent\'s GC are told apart from other broken invariants in the report', () => {
  const r = new SoakReport(7, 'smoke', 2);
  r.checked(0, ['dead-sandboxes', 'doctor-leaks', 'host-leaks'], [
    { invariant: 'dead-sandboxes', key: 'a', message: 'sandbox aaa of nodelet-soak/web-1 is not ready and not the pod\'s newest' },
    { invariant: 'doctor-leaks', key: 'b', message: 'leaks.dead-container: container "bbb" (main, created) of pod nodelet-soak/web-1' },
    { invariant: 'doctor-leaks', key: 'c', message: 'leaks.ip: IP 10.0.0.9 of network "nodelet-pods" is allocated to "ccc", which has no sandbox' },
  ]);
  assert.deepEqual(r.failures.map(awaitsGc), [true, true, false]);
  const text = r.format('nodelet soak --seed 7 --smoke');
  assert.match(text, /leftovers only the agent's garbage collector removes .*: 2\n {4}round 1 dead-sandboxes: sandbox aaa/);
  assert.match(text, /first broken invariant \(round 1\): doctor-leaks: leaks\.ip: IP 10\.0\.0\.9/);
  assert.match(text, /replay: nodelet soak --seed 7 --smoke/);
  assert.equal((r.toJSON() as { awaitingGc: number }).awaitingGc, 2);
});

test('a run with only GC leftovers names no other first broken invariant; a clean run prints no replay line', () => {
  const r = new SoakReport(7, 'smoke', 2);
  r.checked(1, ['dead-containers'], [{ invariant: 'dead-containers', key: 'x', message: 'container xxx "main" (created) of pod uid u is a dead container beyond the newest one' }]);
  assert.doesNotMatch(r.format('replay'), /first broken invariant/);
  assert.doesNotMatch(new SoakReport(1, 'smoke', 2).format('replay'), /replay:|leftovers/);
});

test('agent-resources: the heap left after a full GC compared over the quiet cycle in one process, RSS not judged, fds against the lower baseline', () => {
  const u = (pid: number, liveMiB: number | undefined, fds: number, rssMiB = 90) => ({ pid, rssKiB: rssMiB * 1024, fds, ...(liveMiB === undefined ? {} : { liveKiB: liveMiB * 1024, rssAfterGcKiB: rssMiB * 1024 }) });
  // A restarted agent is younger than the fresh baseline: it is not compared with the first one.
  assert.equal(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 41), after: u(2, 32, 42) }), undefined);
  // RSS moved by GC timing (CI: 84.9 → 95.5 MiB) with the live heap flat is no finding.
  assert.equal(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 41, 84.9), after: u(2, 30.5, 41, 95.5) }), undefined);
  assert.match(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 41), after: u(2, 33.5, 42) }) ?? '', /live heap after a full GC 30\.0 → 33\.5 MiB over one quiet churn cycle/);
  assert.match(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 41), after: u(2, undefined, 42) }) ?? '', /heap after a full collection was not measured/);
  assert.match(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 50), after: u(2, 30, 45) }) ?? '', /open fds 40 → 45/);
  assert.match(resourceDrift({ fresh: u(1, 20, 40), warm: u(2, 30, 40), after: u(3, 30, 40) }) ?? '', /restarted during the quiet cycle \(pid 2 → 3\)/);
});
