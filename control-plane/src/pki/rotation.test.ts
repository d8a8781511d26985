import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { FakeClock, cleanups } from '@nodelet/base/testing';
import { createCa, issueCertificate, loadCa, type KeyPairPem } from './certs.js';
import { ensurePki, type Pki } from './pki.js';
import { startCertRotation, type CertRotation, type CertRotationOptions } from './rotation.js';

const DAY = 24 * 3600 * 1000;
const HOUR = 3600_000;
const serial = (pair: KeyPairPem): string => new X509Certificate(pair.certPem).serialNumber;

interface Rig {
  dir: string;
  clock: FakeClock;
  pki: Pki;
  /** The PKI's notion of "now" (ms); tests move it to make certificates due. */
  time: { now: number };
  serving: KeyPairPem[];
  agentClient: KeyPairPem[];
  rotation: CertRotation;
}

async function rig(t: TestContext, extra: Partial<CertRotationOptions> = {}): Promise<Rig> {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-rotation-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const time = { now: Date.now() };
  const pkiOptions = { dir, now: () => time.now };
  const pki = await ensurePki(pkiOptions);
  const clock = new FakeClock();
  const serving: KeyPairPem[] = [];
  const agentClient: KeyPairPem[] = [];
  const rotation = startCertRotation({
    pki: pkiOptions,
    current: pki,
    clock,
    onServing: (p) => void serving.push(p),
    onAgentClient: (p) => void agentClient.push(p),
    ...extra,
  });
  cleanup(() => rotation.close());
  return { dir, clock, pki, time, serving, agentClient, rotation };
}

test('the hourly check swaps in re-issued pairs once they are within 30 days of expiry, and only then', async (t) => {
  const r = await rig(t);
  r.clock.advance(HOUR);
  await r.rotation.check(); // runs after the timer's check
  assert.deepEqual([r.serving.length, r.agentClient.length], [0, 0], 'nothing due yet');

  r.time.now += 340 * DAY;
  r.clock.advance(HOUR);
  await r.rotation.check();
  assert.equal(r.serving.length, 1);
  assert.equal(r.agentClient.length, 1);
  assert.notEqual(serial(r.serving[0]!), serial(r.pki.serving));
  assert.notEqual(serial(r.agentClient[0]!), serial(r.pki.agentClient));
  // What was swapped in is what is on disk (a restart serves the same pair).
  assert.equal(await readFile(join(r.dir, 'apiserver.crt'), 'utf8'), r.serving[0]!.certPem);
  assert.equal(await readFile(join(r.dir, 'apiserver.key'), 'utf8'), r.serving[0]!.keyPem);

  r.clock.advance(HOUR);
  await r.rotation.check();
  assert.equal(r.serving.length, 1, 'the new pair is not due: no second swap');
});

test('a pair broken on disk while running is re-issued and swapped in at the next check', async (t) => {
  const r = await rig(t);
  await writeFile(join(r.dir, 'apiserver-kubelet-client.key'), (await createCa('x')).keyPem);
  await r.rotation.check();
  assert.equal(r.agentClient.length, 1);
  assert.equal(r.serving.length, 0);
});

test('a failed install is retried at the next check; the timer keeps running after failures', async (t) => {
  let fail = true;
  const installed: KeyPairPem[] = [];
  const r = await rig(t, {
    onServing: (p) => {
      if (fail) throw new Error('setSecureContext failed');
      installed.push(p);
    },
  });
  r.time.now += 340 * DAY;
  await assert.rejects(r.rotation.check(), /setSecureContext failed/);
  fail = false;
  r.clock.advance(HOUR);
  await r.rotation.check();
  assert.equal(installed.length, 1);
  assert.equal(r.clock.pendingTimers, 1);
});

test('operator serving files are re-read, never re-issued; a half-written pair is not installed', async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-rotation-files-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const ca = await loadCa(await createCa('operator-ca'));
  const first = await issueCertificate(ca, { commonName: 'api', usage: 'server', ips: ['127.0.0.1'] });
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  await writeFile(certFile, first.certPem);
  await writeFile(keyFile, first.keyPem);
  const r = await rig(t, { servingFiles: { certFile, keyFile, loaded: first } });
  r.time.now += 340 * DAY; // our own apiserver.crt is due, but the operator's files are served
  await r.rotation.check();
  assert.equal(r.serving.length, 0);
  const second = await issueCertificate(ca, { commonName: 'api', usage: 'server', ips: ['127.0.0.1'] });
  await writeFile(certFile, second.certPem); // the key is not written yet
  await r.rotation.check();
  assert.equal(r.serving.length, 0, 'mismatched pair must not be installed');
  await writeFile(keyFile, second.keyPem);
  await r.rotation.check();
  assert.deepEqual(r.serving, [second]);
});

test('close stops the timer and is idempotent', async (t) => {
  const r = await rig(t);
  assert.equal(r.clock.pendingTimers, 1);
  await Promise.all([r.rotation.close(), r.rotation.close()]);
  assert.equal(r.clock.pendingTimers, 0);
});
