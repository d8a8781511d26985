import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentError, pollUntil } from '@nodelet/base';
import { FakeClock, cleanups } from '@nodelet/base/testing';
import { createTestCa, type TestCa } from '../testing/test-ca.js';
import { RecordingLogger } from '@nodelet/base/testing';
import { PemPairStore } from './pem-pair-store.js';
import { rotationDeadline } from './rotation-deadline.js';
import { ServingCertManager, type ServingPair } from './serving-cert-manager.js';
import { inspectCertificate, type ServingNames } from './x509.js';

const DAY = 86_400_000;
const HOUR = 3600_000;
const SELF_SIGNED: ServingPair = { cert: 'self-signed cert', key: 'self-signed key' };


/** Advances the fake clock in steps, letting the loop re-arm its timer between them. */
async function advance(clock: FakeClock, ms: number, step = HOUR): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    clock.advance(Math.min(step, left));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }
}

interface Rig {
  clock: FakeClock;
  ca: TestCa;
  log: RecordingLogger;
  names: { value: ServingNames | undefined };
  requests: string[];
  installed: ServingPair[];
  /** Next request outcomes: 'ok' signs for `lifetimeMs`, an Error fails. */
  outcomes: Array<'ok' | Error>;
  lifetimeMs: number;
  /** How far the fake signer back-dates notBefore. */
  backdateMs: number;
  store: PemPairStore;
  manager(): ServingCertManager;
  start(m: ServingCertManager): AbortController;
}

async function rig(t: { after(fn: () => unknown): void }, o: { random?: number; dir?: string; ca?: TestCa; clock?: FakeClock } = {}): Promise<Rig> {
  const cleanup = cleanups(t);
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'nodelet-serving-')));
  if (!o.dir) cleanup(() => rm(dir, { recursive: true, force: true }));
  const clock = o.clock ?? new FakeClock(Date.UTC(2026, 0, 1));
  const ca = o.ca ?? (await createTestCa());
  const r: Rig = {
    clock, ca, log: new RecordingLogger(), names: { value: undefined }, requests: [], installed: [], outcomes: [], lifetimeMs: 10 * DAY, backdateMs: 0,
    store: new PemPairStore({ dir: join(dir, 'pki'), pairName: 'kubelet-server', clock }),
    manager: () => new ServingCertManager({
      store: r.store, nodeName: 'n1', names: () => r.names.value,
      request: async (csrPem) => {
        r.requests.push(csrPem);
        const next = r.outcomes.shift() ?? 'ok';
        if (next instanceof Error) throw next;
        return r.ca.sign(csrPem, clock.now() - r.backdateMs, clock.now() + r.lifetimeMs);
      },
      selfSigned: async () => SELF_SIGNED, clusterCa: ca.certPem, clock, random: () => o.random ?? 0.5, log: r.log, recheckMs: HOUR,
    }),
    start(m) {
      const stop = new AbortController();
      const done = m.run(stop.signal, (p) => r.installed.push(p));
      cleanup(async () => {
        stop.abort();
        await done;
      });
      return stop;
    },
  };
  return r;
}

test('rotation deadline: uniformly within 70–90 % of the validity period', () => {
  assert.equal(rotationDeadline(0, 1000, () => 0), 700);
  assert.equal(rotationDeadline(0, 1000, () => 0.5), 800);
  assert.equal(rotationDeadline(0, 1000, () => 0.999999), 900);
  assert.equal(rotationDeadline(5000, 6000, () => 0.25), 5750);
});

test('no certificate yet: self-signed (logged with why) until the Node registers and the signer answers; retried with backoff', async (t) => {
  const r = await rig(t);
  const m = r.manager();
  assert.deepEqual(await m.initial(), SELF_SIGNED);
  const [warn] = r.log.find(/^Serving with a self-signed certificate/, 'warn');
  assert.match(String(warn?.fields.reason), /no certificate has been issued to this node yet/);
  r.start(m);

  // Not registered yet: nothing to ask for.
  await advance(r.clock, 5000, 1000);
  assert.equal(r.requests.length, 0);
  r.names.value = { dnsNames: ['n1', 'n1.lab'], ips: ['192.0.2.10'] };
  // The approver is down: the CSR waits until it times out, then again after 2 s, 4 s.
  r.outcomes.push(new AgentError('ERR_DEADLINE_EXCEEDED', 'certificate signing request "csr-1" was not approved in time'), new Error('connect ECONNREFUSED'));
  await advance(r.clock, 1000, 1000);
  await pollUntil('first request', () => r.requests.length === 1, { timeoutMs: 5000, intervalMs: 2 });
  await pollUntil('failure logged', () => r.log.find(/^Serving certificate not issued yet/).length === 1, { timeoutMs: 5000, intervalMs: 2 });
  const [w1] = r.log.find(/^Serving certificate not issued yet; still serving the self-signed certificate/, 'warn');
  assert.equal(w1!.fields.retryInMs, 2000);
  assert.equal(w1!.fields.code, 'ERR_DEADLINE_EXCEEDED');
  await advance(r.clock, 1999, 1999);
  assert.equal(r.requests.length, 1, 'backs off 2 s');
  await advance(r.clock, 1, 1);
  await pollUntil('second request', () => r.requests.length === 2, { timeoutMs: 5000, intervalMs: 2 });
  await pollUntil('second failure', () => r.log.find(/^Serving certificate not issued yet/).length === 2, { timeoutMs: 5000, intervalMs: 2 });
  assert.equal(r.log.find(/^Serving certificate not issued yet/)[1]!.fields.retryInMs, 4000);
  await advance(r.clock, 4000, 1000);
  await pollUntil('installed', () => r.installed.length === 1, { timeoutMs: 5000, intervalMs: 2 });

  const info = inspectCertificate(r.installed[0]!.cert);
  assert.deepEqual(info.dnsNames.sort(), ['n1', 'n1.lab']);
  assert.deepEqual(info.ips, ['192.0.2.10']);
  const stored = await r.store.load();
  assert.equal(stored.status === 'ok' && stored.pair.keyPem.trim(), r.installed[0]!.key.trim(), 'stored before it is served');
  assert.equal(r.log.find(/^Serving certificate issued by the cluster; now serving it/, 'info').length, 1);
  assert.deepEqual(m.current, { notBefore: info.notBefore, notAfter: info.notAfter, deadline: Math.round(info.notBefore + 0.8 * (info.notAfter - info.notBefore)) });
});

test('renewed at the jittered deadline without a restart; a restarted agent serves the stored pair and keeps the schedule', async (t) => {
  const r = await rig(t, { random: 0.25 }); // deadline at 75 % of 10 days = 7.5 days
  r.names.value = { dnsNames: ['n1'], ips: ['192.0.2.10'] };
  const m = r.manager();
  await m.initial();
  r.start(m);
  await pollUntil('first certificate', () => r.installed.length === 1, { timeoutMs: 5000, intervalMs: 2 });
  const first = inspectCertificate(r.installed[0]!.cert);
  assert.equal(m.current!.deadline, first.notBefore + 7.5 * DAY);

  await advance(r.clock, 7.5 * DAY - 2 * HOUR);
  assert.equal(r.requests.length, 1, 'nothing before the deadline');
  await advance(r.clock, 2 * HOUR);
  await pollUntil('rotated', () => r.installed.length === 2, { timeoutMs: 5000, intervalMs: 2 });
  assert.notEqual(r.installed[1]!.key, r.installed[0]!.key, 'a new key each time');
  assert.equal(r.log.find(/^Serving certificate rotated$/, 'info').length, 1);
  const current = await r.store.load();
  assert.equal(current.status === 'ok' && current.pair.keyPem.trim(), r.installed[1]!.key.trim());

  // Restart: the stored pair is served at once, no request until its own deadline.
  const again = await rig(t, { random: 0.25, dir: join(r.store.currentPath, '..', '..'), ca: r.ca, clock: r.clock });
  again.names.value = r.names.value;
  const m2 = again.manager();
  const served = await m2.initial();
  assert.equal(served.key.trim(), r.installed[1]!.key.trim());
  assert.equal(again.log.find(/^Serving certificate loaded$/, 'info').length, 1);
  assert.equal(again.log.find(/self-signed/).length, 0);
  again.start(m2);
  await advance(again.clock, 2 * HOUR);
  assert.equal(again.requests.length, 0);
});

test('a stored pair that expired, or that another CA signed, is not served', async (t) => {
  const r = await rig(t);
  r.names.value = { dnsNames: ['n1'], ips: ['192.0.2.10'] };
  r.lifetimeMs = DAY;
  const m = r.manager();
  await m.initial();
  const stop = r.start(m);
  await pollUntil('issued', () => r.installed.length === 1, { timeoutMs: 5000, intervalMs: 2 });
  stop.abort();
  r.clock.advance(2 * DAY);
  const expired = await rig(t, { dir: join(r.store.currentPath, '..', '..'), ca: r.ca, clock: r.clock });
  assert.deepEqual(await expired.manager().initial(), SELF_SIGNED);
  assert.match(String(expired.log.find(/self-signed/, 'warn')[0]?.fields.reason), /the stored certificate expired at 2026-01-02T00:00:00.000Z/);

  const otherCluster = await rig(t, { dir: join(r.store.currentPath, '..', '..'), ca: await createTestCa('other'), clock: new FakeClock(Date.UTC(2026, 0, 1, 1)) });
  assert.deepEqual(await otherCluster.manager().initial(), SELF_SIGNED);
  assert.match(String(otherCluster.log.find(/self-signed/, 'warn')[0]?.fields.reason), /not signed by the cluster CA/);
});

test('the Node\'s addresses changed: a new certificate for the new names, before the deadline', async (t) => {
  const r = await rig(t);
  r.names.value = { dnsNames: ['n1'], ips: ['192.0.2.10'] };
  const m = r.manager();
  await m.initial();
  r.start(m);
  await pollUntil('issued', () => r.installed.length === 1, { timeoutMs: 5000, intervalMs: 2 });
  r.names.value = { dnsNames: ['n1'], ips: ['192.0.2.99'] };
  await advance(r.clock, HOUR);
  await pollUntil('re-issued', () => r.installed.length === 2, { timeoutMs: 5000, intervalMs: 2 });
  assert.deepEqual(inspectCertificate(r.installed[1]!.cert).ips, ['192.0.2.99']);
  assert.equal(r.log.find(/^Node names changed/).length, 1);
  assert.ok((await readlink(r.store.currentPath)).startsWith('kubelet-server-'));
});

test('a short-lived certificate with a back-dated notBefore is renewed at 70–90 % of what is left, not in a loop', async (t) => {
  const r = await rig(t);
  r.names.value = { dnsNames: ['n1'], ips: ['192.0.2.10'] };
  r.lifetimeMs = 60_000;
  r.backdateMs = 5 * 60_000; // as the cluster signer does: valid from 5 min ago to 1 min ahead
  const m = r.manager();
  await m.initial();
  r.start(m);
  await pollUntil('issued', () => r.installed.length === 1, { timeoutMs: 5000, intervalMs: 2 });
  const issuedAt = r.clock.now();
  assert.equal(m.current!.deadline, issuedAt + 48_000, '80 % of the minute it has left');
  await advance(r.clock, 47_000, 1000);
  assert.equal(r.requests.length, 1);
  await advance(r.clock, 1000, 1000);
  await pollUntil('renewed once', () => r.installed.length === 2, { timeoutMs: 5000, intervalMs: 2 });
  assert.equal(r.requests.length, 2);
});
