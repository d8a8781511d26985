// sameObservedPod: the PLEG's "did this pod change" check, which must agree with comparing the
// two views' JSON (what it replaced) on every field, undefined ones included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nanosToMs, sameObservedPod, type ObservedContainer, type ObservedPod, type ObservedSandbox } from './observed.js';

const sandbox = (o: Partial<ObservedSandbox> = {}): ObservedSandbox => ({ id: 's1', attempt: 0, ready: true, createdAt: 1, ips: ['10.0.0.2'], name: 'p', namespace: 'd', uid: 'u', ...o });
const container = (o: Partial<ObservedContainer> = {}): ObservedContainer => ({
  id: 'c1', sandboxId: 's1', name: 'main', type: 'regular', state: 'running', hash: 'h', restartCount: 0, createdAt: 2, image: 'busybox', imageRef: 'sha256:1', startedAt: 3, ...o,
});
const pod = (s: ObservedSandbox[] = [sandbox()], c: ObservedContainer[] = [container()]): ObservedPod => ({ uid: 'u', name: 'p', namespace: 'd', sandboxes: s, containers: c });
const sameJson = (a: ObservedPod, b: ObservedPod): boolean => JSON.stringify(a) === JSON.stringify(b);

test('sameObservedPod agrees with comparing the JSON of the two views', () => {
  const cases: Array<[string, ObservedPod]> = [
    ['equal copy', pod()],
    ['a sandbox IP', pod([sandbox({ ips: ['10.0.0.3'] })])],
    ['one more IP', pod([sandbox({ ips: ['10.0.0.2', 'fd00::2'] })])],
    ['sandbox not ready', pod([sandbox({ ready: false })])],
    ['a second sandbox', pod([sandbox(), sandbox({ id: 's0' })])],
    ['container exited', pod(undefined, [container({ state: 'exited', exitCode: 0, finishedAt: 4 })])],
    ['an exit code appears', pod(undefined, [container({ exitCode: 1 })])],
    ['a field set to undefined', pod(undefined, [container({ reason: undefined })])],
    ['a field gone', pod(undefined, [(({ startedAt: _, ...rest }) => rest)(container())])],
    ['a restart', pod(undefined, [container({ restartCount: 1 })])],
    ['no containers', pod(undefined, [])],
    ['another name', { ...pod(), name: 'q' }],
  ];
  const base = pod();
  for (const [what, other] of cases) {
    assert.equal(sameObservedPod(base, other), sameJson(base, other), what);
    assert.equal(sameObservedPod(other, base), sameJson(other, base), `${what} (reversed)`);
  }
});

test('nanosToMs truncates CRI nanoseconds to ms as a BigInt division would, and reads unset and negative times as 0', () => {
  const viaBigInt = (v: string): number => Math.max(0, Number(BigInt(v) / 1_000_000n));
  for (const v of ['1733300000000000001', '1733300000999999999', '9223372036854775807', '1000000', '999999', '1234567', '5', '-5', '-6795364578871345152', '-1000000']) {
    assert.equal(nanosToMs(v), viaBigInt(v), v);
  }
  assert.equal(nanosToMs('1733300000123456789'), 1733300000123);
  for (const unset of [undefined, null, '', '0', 0]) assert.equal(nanosToMs(unset), 0);
  assert.equal(nanosToMs(2_500_000), 2);
  assert.throws(() => nanosToMs('12ab'));
});
