import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { Container, Pod } from '@nodelet/api';
import { stopContainer, type ContainerStopDeps, type ContainerToStop } from './container-stop.js';

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [] } };

/** A runtime whose ExecSync takes `execS` seconds of the fake clock and exits with `exitCode`. */
function world(o: { execS?: number; exitCode?: number } = {}) {
  const clock = new FakeClock();
  const log: string[] = [];
  const deps: ContainerStopDeps = {
    clock,
    runtimeRequestTimeoutMs: 1000,
    log: noopLogger,
    events: { event: (_p, type, reason, message) => log.push(`event ${type} ${reason} ${message}`) },
    runtime: {
      execSync: async (req, opts) => {
        log.push(`exec ${(req.cmd ?? []).join(' ')} timeout=${String(req.timeout)}`);
        await clock.sleep((o.execS ?? 0) * 1000, opts?.signal);
        return { exitCode: o.exitCode ?? 0, stdout: Buffer.from('out'), stderr: Buffer.from('err') };
      },
      stopContainer: async (req) => {
        log.push(`stop ${String(req.containerId)} timeout=${String(req.timeout)}`);
        return {};
      },
    },
  };
  return { clock, log, deps };
}

function target(lifecycle?: Container['lifecycle']): ContainerToStop {
  return { id: 'c1', name: 'app', running: true, fieldPath: 'spec.containers{app}', spec: { name: 'app', image: 'x', ...(lifecycle ? { lifecycle } : {}) } };
}

/** Runs `p` while advancing the fake clock one second at a time. */
async function drive<T>(clock: FakeClock, p: Promise<T>): Promise<T> {
  let done = false;
  const r = p.finally(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) await clock.advanceAsync(1000);
  return r;
}

test('preStop runs before StopContainer and its whole seconds come off the grace period', async () => {
  const w = world({ execS: 5 });
  const signal = new AbortController().signal;
  await drive(w.clock, stopContainer(w.deps, pod, target({ preStop: { exec: { command: ['drain'] } } }), { graceS: 30, signal }, 1000));
  assert.deepEqual(w.log, ['event Normal Killing Stopping container app', 'exec drain timeout=30', 'stop c1 timeout=25']);
});

test('a preStop hook that outlives the grace period is cut off and the stop still gets 2 s', async () => {
  const w = world({ execS: 60 });
  const signal = new AbortController().signal;
  await drive(w.clock, stopContainer(w.deps, pod, target({ preStop: { exec: { command: ['hang'] } } }), { graceS: 10, signal }, 1000));
  assert.deepEqual(w.log.slice(1), ['exec hang timeout=10', 'stop c1 timeout=2']);
  assert.equal(w.clock.monotonic(), 10_000, 'the hook was given exactly the grace period');
});

test('a failing preStop hook is a FailedPreStopHook event without its output; the stop follows', async () => {
  const w = world({ execS: 1, exitCode: 3 });
  const signal = new AbortController().signal;
  await drive(w.clock, stopContainer(w.deps, pod, target({ preStop: { exec: { command: ['drain'] } } }), { graceS: 30, signal }, 1000));
  assert.deepEqual(w.log, ['event Normal Killing Stopping container app', 'exec drain timeout=30', 'event Warning FailedPreStopHook PreStopHook failed', 'stop c1 timeout=29']);
});

test('a sleep preStop hook waits on the clock', async () => {
  const w = world();
  const signal = new AbortController().signal;
  await drive(w.clock, stopContainer(w.deps, pod, target({ preStop: { sleep: { seconds: 4 } } }), { graceS: 30, signal }, 1000));
  assert.deepEqual(w.log.slice(1), ['stop c1 timeout=26']);
  assert.equal(w.clock.monotonic(), 4000);
});

test('grace 0: no hook; a forced deletion stops at once, a kill during a sync still gets 2 s', async () => {
  const signal = new AbortController().signal;
  const forced = world();
  await stopContainer(forced.deps, pod, target({ preStop: { exec: { command: ['drain'] } } }), { graceS: 0, signal, zeroMeansNow: true }, 1000);
  assert.deepEqual(forced.log.slice(1), ['stop c1 timeout=0']);
  const sync = world();
  await stopContainer(sync.deps, pod, target({ preStop: { exec: { command: ['drain'] } } }), { graceS: 0, signal }, 1000);
  assert.deepEqual(sync.log.slice(1), ['stop c1 timeout=2']);
});

test('the hook runs once per container and not for containers that are not running or have no spec', async () => {
  const signal = new AbortController().signal;
  const w = world();
  const ran = new Set<string>();
  const claimPreStop = (id: string) => !ran.has(id) && !!ran.add(id);
  const t = target({ preStop: { exec: { command: ['drain'] } } });
  await drive(w.clock, stopContainer(w.deps, pod, t, { graceS: 30, signal, claimPreStop }, 1000));
  await stopContainer(w.deps, pod, t, { graceS: 30, signal, claimPreStop }, 1000);
  await stopContainer(w.deps, pod, { ...t, id: 'c2', running: false }, { graceS: 30, signal }, 1000);
  await stopContainer(w.deps, pod, { ...t, id: 'c3', spec: undefined }, { graceS: 30, signal }, 1000);
  assert.deepEqual(w.log.filter((l) => !l.startsWith('event')), ['exec drain timeout=30', 'stop c1 timeout=30', 'stop c1 timeout=30', 'stop c2 timeout=30', 'stop c3 timeout=30']);
});

test('termination aborted while the hook runs rejects without stopping', async () => {
  const w = world({ execS: 60 });
  const ac = new AbortController();
  const p = stopContainer(w.deps, pod, target({ preStop: { exec: { command: ['drain'] } } }), { graceS: 30, signal: ac.signal }, 1000);
  await w.clock.advanceAsync(1000);
  ac.abort(new DOMException('pod deleted', 'AbortError'));
  await assert.rejects(p, { name: 'AbortError' });
  assert.ok(!w.log.some((l) => l.startsWith('stop')));
});
