import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, hasCode, isAbortError } from '@nodelet/base';
import { InMemoryApiServer } from '../testing/index.js';
import { CONFIGMAPS } from '../types/resources.js';
import { retryOnConflict } from './retry.js';

test('retryOnConflict re-runs a read-modify-write that lost a race', async (t) => {
  const s = await InMemoryApiServer.start();
  t.after(() => s.close());
  const cms = s.client().resource(CONFIGMAPS, 'default');
  await cms.create({ metadata: { name: 'c' }, data: { n: '0' } });
  const attempts: number[] = [];
  const out = await retryOnConflict(async (attempt) => {
    attempts.push(attempt);
    const cur = await cms.get('c');
    if (attempt === 1) await cms.patch('c', { data: { other: 'writer' } }, { type: 'merge' }); // a racing writer
    return cms.update({ ...cur, data: { ...cur.data, n: String(Number(cur.data?.n) + 1) } });
  }, { initialDelayMs: 1 });
  assert.deepEqual(attempts, [1, 2]);
  assert.deepEqual(out.data, { n: '1', other: 'writer' });
});

test('retryOnConflict gives up after the attempts, and never retries other errors', async () => {
  let calls = 0;
  await assert.rejects(
    retryOnConflict(async () => {
      calls++;
      throw new AgentError('ERR_CONFLICT', 'conflict');
    }, { attempts: 3, initialDelayMs: 1 }),
    (e) => hasCode(e, 'ERR_CONFLICT'),
  );
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(
    retryOnConflict(async () => {
      calls++;
      throw new AgentError('ERR_NOT_FOUND', 'gone');
    }),
    (e) => hasCode(e, 'ERR_NOT_FOUND'),
  );
  assert.equal(calls, 1);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(retryOnConflict(async () => 1, { signal: ac.signal }), (e) => isAbortError(e));
});
