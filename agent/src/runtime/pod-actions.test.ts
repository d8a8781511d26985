import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import { computePodActions, type PodActions } from './pod-actions.js';
import { containerHash } from '../kubecontainer/labels.js';
import type { ObservedContainer, ObservedPod, ObservedSandbox } from '../kubecontainer/observed.js';

const app = { name: 'app', image: 'busybox' };
const side = { name: 'side', image: 'busybox' };
const init = { name: 'init', image: 'busybox' };

function pod(opts: { restartPolicy?: 'Always' | 'OnFailure' | 'Never'; inits?: boolean; hostNetwork?: boolean } = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u1' },
    spec: {
      containers: [app, side],
      initContainers: opts.inits ? [init, { ...init, name: 'init2' }] : undefined,
      restartPolicy: opts.restartPolicy,
      hostNetwork: opts.hostNetwork,
    },
  };
}

let t = 1000;
function sandbox(attempt: number, ready = true, ips = ['10.234.0.5']): ObservedSandbox {
  return { id: `sb${attempt}`, attempt, ready, createdAt: t++, ips, name: 'p', namespace: 'default', uid: 'u1' };
}
function ctr(name: string, state: ObservedContainer['state'], o: Partial<ObservedContainer> = {}): ObservedContainer {
  const spec = [app, side, init, { ...init, name: 'init2' }].find((c) => c.name === name)!;
  return {
    id: `${name}-${o.restartCount ?? 0}`,
    sandboxId: 'sb0',
    name,
    type: name.startsWith('init') ? 'init' : 'regular',
    state,
    hash: containerHash(spec),
    restartCount: 0,
    createdAt: t++,
    image: 'busybox',
    imageRef: 'sha256:x',
    ...(state === 'exited' ? { exitCode: 0 } : {}),
    ...o,
  };
}
function observed(sandboxes: ObservedSandbox[], containers: ObservedContainer[]): ObservedPod {
  // newest first, as the PLEG provides them
  return { uid: 'u1', name: 'p', namespace: 'default', sandboxes: [...sandboxes].reverse(), containers: [...containers].reverse() };
}

const base: PodActions = { killPod: false, createSandbox: false, attempt: 0, initFailed: false, sidecarsToStart: [], containersToStart: [], containersToKill: [], ephemeralToStart: [] };

const cases: Array<{ name: string; pod: Pod; obs: ObservedPod; want: Partial<PodActions> }> = [
  {
    name: 'new pod: create sandbox attempt 0, start all containers',
    pod: pod(),
    obs: observed([], []),
    want: { killPod: true, createSandbox: true, containersToStart: [0, 1] },
  },
  {
    name: 'new pod with init containers: create sandbox, first init only',
    pod: pod({ inits: true }),
    obs: observed([], []),
    want: { killPod: true, createSandbox: true, nextInitContainer: 0 },
  },
  {
    name: 'steady state: nothing to do',
    pod: pod(),
    obs: observed([sandbox(0)], [ctr('app', 'running'), ctr('side', 'running')]),
    want: { sandboxId: 'sb0' },
  },
  {
    name: 'sandbox died: recreate with the next attempt',
    pod: pod(),
    obs: observed([sandbox(0, false)], [ctr('app', 'exited', { exitCode: 137 }), ctr('side', 'exited', { exitCode: 137 })]),
    want: { killPod: true, createSandbox: true, attempt: 1, containersToStart: [0, 1] },
  },
  {
    name: 'sandbox without IP is recreated (not hostNetwork)',
    pod: pod(),
    obs: observed([sandbox(0, true, [])], []),
    want: { killPod: true, createSandbox: true, attempt: 1, containersToStart: [0, 1] },
  },
  {
    name: 'hostNetwork sandbox needs no IP',
    pod: pod({ hostNetwork: true }),
    obs: observed([sandbox(0, true, [])], [ctr('app', 'running'), ctr('side', 'running')]),
    want: { sandboxId: 'sb0' },
  },
  {
    name: 'two ready sandboxes: kill and recreate',
    pod: pod(),
    obs: observed([sandbox(0), sandbox(1)], []),
    want: { killPod: true, createSandbox: true, attempt: 2, containersToStart: [0, 1] },
  },
  {
    name: 'Never: dead sandbox with containers that ran is not recreated',
    pod: pod({ restartPolicy: 'Never' }),
    obs: observed([sandbox(0, false)], [ctr('app', 'exited'), ctr('side', 'exited')]),
    want: { killPod: true, attempt: 1 },
  },
  {
    name: 'OnFailure: new sandbox skips succeeded containers',
    pod: pod({ restartPolicy: 'OnFailure' }),
    obs: observed([sandbox(0, false)], [ctr('app', 'exited', { exitCode: 0 }), ctr('side', 'exited', { exitCode: 2 })]),
    want: { killPod: true, createSandbox: true, attempt: 1, containersToStart: [1] },
  },
  {
    name: 'OnFailure: all succeeded and sandbox gone: no new sandbox',
    pod: pod({ restartPolicy: 'OnFailure' }),
    obs: observed([sandbox(0, false)], [ctr('app', 'exited'), ctr('side', 'exited')]),
    want: { killPod: true, attempt: 1 },
  },
  {
    name: 'Always: an exited container is restarted',
    pod: pod(),
    obs: observed([sandbox(0)], [ctr('app', 'exited', { exitCode: 1 }), ctr('side', 'running')]),
    want: { sandboxId: 'sb0', containersToStart: [0] },
  },
  {
    name: 'Always: a succeeded container is restarted too',
    pod: pod(),
    obs: observed([sandbox(0)], [ctr('app', 'exited', { exitCode: 0 }), ctr('side', 'running')]),
    want: { sandboxId: 'sb0', containersToStart: [0] },
  },
  {
    name: 'OnFailure: failed restarts, succeeded stays',
    pod: pod({ restartPolicy: 'OnFailure' }),
    obs: observed([sandbox(0)], [ctr('app', 'exited', { exitCode: 1 }), ctr('side', 'exited', { exitCode: 0 })]),
    want: { sandboxId: 'sb0', containersToStart: [0] },
  },
  {
    name: 'Never: all exited → kill the pod (sandbox)',
    pod: pod({ restartPolicy: 'Never' }),
    obs: observed([sandbox(0)], [ctr('app', 'exited', { exitCode: 1 }), ctr('side', 'exited', { exitCode: 0 })]),
    want: { sandboxId: 'sb0', killPod: true },
  },
  {
    name: 'Never: a created-but-not-started container is started again',
    pod: pod({ restartPolicy: 'Never' }),
    obs: observed([sandbox(0)], [ctr('app', 'created'), ctr('side', 'running')]),
    want: { sandboxId: 'sb0', containersToStart: [0] },
  },
  {
    name: 'spec change of a running container: kill and start',
    pod: pod(),
    obs: observed([sandbox(0)], [ctr('app', 'running', { hash: 'deadbeef' }), ctr('side', 'running')]),
    want: {
      sandboxId: 'sb0',
      containersToStart: [0],
      containersToKill: [{ id: 'app-0', name: 'app', reason: 'container "app" definition changed, will be restarted' }],
    },
  },
  {
    name: 'init 1 running: wait',
    pod: pod({ inits: true }),
    obs: observed([sandbox(0)], [ctr('init', 'running')]),
    want: { sandboxId: 'sb0' },
  },
  {
    name: 'init 1 succeeded: start init 2',
    pod: pod({ inits: true }),
    obs: observed([sandbox(0)], [ctr('init', 'exited')]),
    want: { sandboxId: 'sb0', nextInitContainer: 1 },
  },
  {
    name: 'init 1 failed under Always: restart it',
    pod: pod({ inits: true }),
    obs: observed([sandbox(0)], [ctr('init', 'exited', { exitCode: 1 })]),
    want: { sandboxId: 'sb0', nextInitContainer: 0 },
  },
  {
    name: 'init failed under Never: pod failed',
    pod: pod({ inits: true, restartPolicy: 'Never' }),
    obs: observed([sandbox(0)], [ctr('init', 'exited', { exitCode: 1 })]),
    want: { sandboxId: 'sb0', initFailed: true, killPod: true },
  },
  {
    name: 'all inits done: start app containers',
    pod: pod({ inits: true }),
    obs: observed([sandbox(0)], [ctr('init', 'exited'), ctr('init2', 'exited')]),
    want: { sandboxId: 'sb0', containersToStart: [0, 1] },
  },
  {
    name: 'init statuses gone but app containers ran: init counts as done',
    pod: pod({ inits: true }),
    obs: observed([sandbox(0)], [ctr('app', 'running'), ctr('side', 'exited', { exitCode: 1 })]),
    want: { sandboxId: 'sb0', containersToStart: [1] },
  },
];

for (const c of cases) {
  test(`computePodActions: ${c.name}`, () => {
    assert.deepEqual(computePodActions(c.pod, c.obs), { ...base, ...c.want });
  });
}

test('computePodActions: a failed liveness probe kills and restarts the container (kubelet "failed liveness probe")', () => {
  const obs = observed([sandbox(0)], [ctr('app', 'running'), ctr('side', 'running')]);
  const failed = (id: string) => (id === 'app-0' ? 'liveness' as const : undefined);
  assert.deepEqual(computePodActions(pod(), obs, failed), {
    ...base,
    sandboxId: 'sb0',
    containersToStart: [0],
    containersToKill: [{ id: 'app-0', name: 'app', reason: 'Container app failed liveness probe, will be restarted', probe: 'liveness' }],
  });
});

test('computePodActions: under Never a failed startup probe kills without restart; the last one kills the pod', () => {
  const obs = observed([sandbox(0)], [ctr('app', 'running'), ctr('side', 'exited', { exitCode: 0 })]);
  const a = computePodActions(pod({ restartPolicy: 'Never' }), obs, () => 'startup');
  assert.deepEqual(a.containersToStart, []);
  assert.deepEqual(a.containersToKill.map((k) => k.reason), ['Container app failed startup probe, will be restarted']);
  assert.equal(a.killPod, true);
});

test('computePodActions: an ephemeral container starts once in the running sandbox, never again and never in a new one', () => {
  const dbg = { name: 'dbg', image: 'busybox', targetContainerName: 'app' };
  const p: Pod = { ...pod(), spec: { ...pod().spec!, ephemeralContainers: [dbg] } };
  const running = [ctr('app', 'running'), ctr('side', 'running')];
  assert.deepEqual(computePodActions(p, observed([sandbox(0)], running)).ephemeralToStart, [0]);
  const ran: ObservedContainer = { ...ctr('app', 'exited', { exitCode: 1 }), id: 'dbg-0', name: 'dbg', type: 'ephemeral', hash: '' };
  const after = computePodActions(p, observed([sandbox(0)], [...running, ran]));
  assert.deepEqual(after.ephemeralToStart, [], 'an exited ephemeral container is not restarted');
  assert.equal(after.killPod, false, 'nor does it change the pod');
  const fresh = computePodActions(p, observed([sandbox(0, false)], [ctr('app', 'exited'), ctr('side', 'exited')]));
  assert.deepEqual(fresh.ephemeralToStart, [], 'a new sandbox does not run it');
});
