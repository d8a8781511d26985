/**
 * The enforcer's admission of new pods and its contribution cache, against a real in-memory API
 * server and real informers; the proxy's side (contribution → written) is played by the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode, noopLogger, pollUntil, systemClock, type Clock } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { Informer, NAMESPACES, NETWORKPOLICIES, PODS, type Namespace, type NetworkPolicy, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { NetworkPolicyEnforcer } from './enforcer.js';
import type { NetpolContribution } from './render.js';
import { namespace, pod, policy } from './testing/fixtures.js';

async function world(t: { after(fn: () => unknown): void }, clock: Clock = systemClock) {
  const server = await InMemoryApiServer.start();
  const api = server.client();
  await api.create(NAMESPACES, namespace('app'));
  await api.create(NAMESPACES, namespace('open'));
  await api.create(NETWORKPOLICIES, policy('deny', 'app', { podSelector: {} }));
  const inf = { client: api, clock: systemClock, logger: noopLogger };
  const policies = new Informer<NetworkPolicy>({ ...inf, resource: NETWORKPOLICIES });
  const namespaces = new Informer<Namespace>({ ...inf, resource: NAMESPACES });
  const pods = new Informer<Pod>({ ...inf, resource: PODS });
  const e = new NetworkPolicyEnforcer({ nodeName: 'n1', log: noopLogger, clock, informers: { policies, namespaces, pods }, admitTimeoutMs: 5000 });
  let syncs = 0;
  const unsubscribe = e.subscribe(() => void syncs++);
  t.after(async () => {
    unsubscribe();
    await Promise.all([policies.close(), namespaces.close(), pods.close()]);
    api.close();
    await server.close();
  });
  await e.waitForSync(AbortSignal.timeout(5000));
  /** What the proxy does at a sync. */
  const sync = (): NetpolContribution => {
    const c = e.contribution() as NetpolContribution;
    e.written(c);
    return c;
  };
  return { api, e, sync, syncs: () => syncs };
}

const fresh = (ns: string): Pod => {
  const p = pod(`fresh-${ns}`, ns, { app: 'x' }, '');
  p.status = { phase: 'Pending' };
  return p;
};

test('admit waits until a sync holding the pod IP is live, and that sync isolates it', async (t) => {
  const w = await world(t);
  w.sync();
  const before = w.syncs();
  let done = false;
  const admitted = w.e.admit(fresh('app'), ['10.244.0.50'], AbortSignal.timeout(5000)).then(() => (done = true));
  assert.equal(w.syncs(), before + 1, 'admit asked the proxy for a sync');
  await Promise.resolve();
  assert.equal(done, false, 'not before the sync');
  const c = w.sync();
  await admitted;
  assert.ok(c.localIPs.has('10.244.0.50'));
  assert.ok(c.sets.get('netpol-ingress-pods')!.elements.has('10.244.0.50'), 'isolated by the deny policy of its namespace');
  const syncs = w.syncs();
  await w.e.admit(fresh('app'), ['10.244.0.50'], AbortSignal.timeout(1000));
  assert.equal(w.syncs(), syncs, 'again (a container restart): live already, no sync asked for');
});

test('admit returns at once for a namespace without policies (even before the first sync), and for host-network pods', async (t) => {
  const w = await world(t);
  await w.e.admit(fresh('open'), ['10.244.0.51'], AbortSignal.timeout(1000));
  w.sync();
  await w.e.admit(fresh('open'), ['10.244.0.53'], AbortSignal.timeout(1000));
  const host = fresh('app');
  host.spec!.hostNetwork = true;
  await w.e.admit(host, ['192.168.1.5'], AbortSignal.timeout(1000));
});

test('admit of a pod a policy may isolate waits for a live sync (none yet here); it fails retryable after its timeout', async (t) => {
  const clock = new FakeClock();
  const w = await world(t, clock);
  const p = w.e.admit(fresh('app'), ['10.244.0.52'], AbortSignal.timeout(5000));
  await pollUntil('the admission timer is set', () => clock.pendingTimers > 0, { timeoutMs: 5000, intervalMs: 5 });
  clock.advance(5000);
  await assert.rejects(p, (err: unknown) => hasCode(err, 'ERR_UNAVAILABLE') && (err as { retryable: boolean }).retryable);
});

test('the contribution is reused until a NetworkPolicy, Namespace or Pod changes', async (t) => {
  const w = await world(t);
  const a = w.e.contribution();
  assert.equal(w.e.contribution(), a, 'nothing changed: the same object');
  await w.api.create(NETWORKPOLICIES, policy('second', 'app', { podSelector: {} }));
  await pollUntil('a rebuilt contribution with the new policy', () => (w.e.contribution() as NetpolContribution).policyKeys.has('app/second'), { timeoutMs: 5000, intervalMs: 10 });
  assert.ok(w.e.contribution().version > a.version);
});
