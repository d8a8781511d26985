import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentError, hasCode, unlessNotFound } from './errors.js';

test('unlessNotFound: a value passes, ERR_NOT_FOUND is undefined, any other failure propagates', async () => {
  assert.equal(await unlessNotFound(Promise.resolve(7)), 7);
  assert.equal(await unlessNotFound(Promise.reject(new AgentError('ERR_NOT_FOUND', 'gone'))), undefined);
  await assert.rejects(unlessNotFound(Promise.reject(new AgentError('ERR_UNAVAILABLE', 'down'))), (err) => hasCode(err, 'ERR_UNAVAILABLE'));
  await assert.rejects(unlessNotFound(Promise.reject(new Error('plain'))), /plain/);
});
