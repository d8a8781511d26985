import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { CredentialLifetime } from '@nodelet/api';
import { RecordingLogger } from '@nodelet/base/testing';
import { NodeCredentialManager } from './node-credential-manager.js';

const DAY = 86_400_000;
const HOUR = 3600_000;
const START = Date.UTC(2026, 0, 1);

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

async function advance(clock: FakeClock, ms: number, step = HOUR): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    clock.advance(Math.min(step, left));
    await settle();
  }
}

interface Rig {
  clock: FakeClock;
  log: RecordingLogger;
  disk: { token: string; lifetime?: CredentialLifetime };
  /** Tokens the client switched to. */
  switched: string[];
  renewals: number;
  /** Next renewal outcomes ('ok' issues one valid for `ttlMs`). */
  outcomes: Array<'ok' | Error>;
  ttlMs: number;
  user: string;
  start(): { manager: NodeCredentialManager; stop: AbortController; done: Promise<void> };
}

function rig(t: { after(fn: () => unknown): void }, disk: Rig['disk']): Rig {
  const clock = new FakeClock(START);
  const r: Rig = {
    clock, log: new RecordingLogger(), disk, switched: [], renewals: 0, outcomes: [], ttlMs: 10 * DAY, user: 'system:node:n1',
    start() {
      const manager = new NodeCredentialManager({
        nodeName: 'n1',
        whoami: async () => r.user,
        read: async () => ({ ...r.disk }),
        renew: async () => {
          r.renewals++;
          const next = r.outcomes.shift() ?? 'ok';
          if (next instanceof Error) throw next;
          return { token: `token-${r.renewals}`, expiresAt: clock.now() + r.ttlMs };
        },
        write: async (token, lifetime) => {
          r.disk = { token, ...(lifetime ? { lifetime } : {}) };
        },
        onRotated: (token) => r.switched.push(token),
        clock, random: () => 0.5, log: r.log,
      });
      const stop = new AbortController();
      const done = manager.run(stop.signal);
      t.after(async () => {
        stop.abort();
        await done;
      });
      return { manager, stop, done };
    },
  };
  return r;
}

test('renewed at 80 % (jitter 0.5) of its lifetime, written before the client switches, again and again', async (t) => {
  const r = rig(t, { token: 'token-0', lifetime: { issuedAt: START, expiresAt: START + 10 * DAY } });
  const { manager } = r.start();
  await settle();
  assert.equal(manager.current?.deadline, START + 8 * DAY);
  await advance(r.clock, 8 * DAY - HOUR);
  assert.equal(r.renewals, 0);
  await advance(r.clock, HOUR);
  assert.equal(r.renewals, 1);
  assert.deepEqual(r.disk, { token: 'token-1', lifetime: { issuedAt: START + 8 * DAY, expiresAt: START + 18 * DAY } });
  assert.deepEqual(r.switched, ['token-1']);
  assert.equal(r.log.find(/^Node credential rotated$/, 'info').length, 1);
  assert.equal(manager.current?.deadline, START + 16 * DAY);
  await advance(r.clock, 8 * DAY);
  assert.equal(r.renewals, 2);
  assert.deepEqual(r.switched, ['token-1', 'token-2']);
});

test('lifetime unknown (joined by an older nodelet, or a crash between the two writes): renewed once at start to learn it', async (t) => {
  const r = rig(t, { token: 'token-0' });
  r.start();
  await settle();
  assert.equal(r.renewals, 1);
  assert.equal(r.log.find(/^Node credential lifetime not recorded; renewing it now to learn it$/).length, 1);
  assert.equal(r.disk.lifetime?.expiresAt, START + 10 * DAY);
});

test('failures back off and are retried; past expiry and on 401 the error says how to re-join', async (t) => {
  const r = rig(t, { token: 'token-0', lifetime: { issuedAt: START - 9 * DAY, expiresAt: START + DAY } });
  r.outcomes.push(new AgentError('ERR_UNAVAILABLE', 'connect ECONNREFUSED'), new AgentError('ERR_UNAVAILABLE', 'connect ECONNREFUSED'));
  r.start();
  await settle();
  assert.equal(r.renewals, 1, 'the deadline (day 8 of 10) is past: renew at once');
  const warns = r.log.find(/^Node credential renewal failed; will retry$/, 'warn');
  assert.equal(warns.length, 1);
  assert.equal(warns[0]!.fields.retryInMs, 2000);
  await advance(r.clock, 2000, 1000);
  assert.equal(r.renewals, 2);
  assert.equal(r.log.find(/^Node credential renewal failed/, 'warn')[1]!.fields.retryInMs, 4000);
  await advance(r.clock, 4000, 1000);
  assert.equal(r.renewals, 3);
  assert.equal(r.disk.token, 'token-3');
  assert.equal(r.log.find(/./, 'error').length, 0);

  // A credential that expired while the server was unreachable.
  const late = rig(t, { token: 'token-0', lifetime: { issuedAt: START - 10 * DAY, expiresAt: START - HOUR } });
  late.outcomes.push(new AgentError('ERR_UNAUTHENTICATED', 'Unauthorized'));
  late.start();
  await settle();
  const [err] = late.log.find(/^Node credential expired; re-join this node$/, 'error');
  assert.ok(err, 'logged at error level: a human must act');
  assert.match(String(err.fields.fix), /nodelet token create --node-name n1/);
  assert.equal(err.fields.expirationTimestamp, new Date(START - HOUR).toISOString());

  // Refused although not expired (revoked by an admin).
  const revoked = rig(t, { token: 'token-0', lifetime: { issuedAt: START - 9 * DAY, expiresAt: START + DAY } });
  revoked.outcomes.push(new AgentError('ERR_UNAUTHENTICATED', 'Unauthorized'));
  revoked.start();
  await settle();
  assert.equal(revoked.log.find(/^Node credential refused by the API server; re-join this node$/, 'error').length, 1);
});

test('a kubeconfig that is not this node\'s (an admin token) is never rotated', async (t) => {
  const r = rig(t, { token: 'admin-token' });
  r.user = 'system:admin';
  const { done } = r.start();
  await done;
  assert.equal(r.renewals, 0);
  assert.equal(r.disk.token, 'admin-token');
  assert.equal(r.log.find(/^Node credential rotation off: the kubeconfig does not authenticate as this node$/).length, 1);
});
