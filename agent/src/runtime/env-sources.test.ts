import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { CONFIGMAPS, SECRETS } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { sourceReader } from '../source/watched-objects.js';
import { apiEnvSources } from './env-sources.js';

test('env sources: ConfigMap data, Secret data decoded from base64, absent objects undefined, other failures thrown', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  server.seed(CONFIGMAPS, { metadata: { name: 'cfg', namespace: 'ns' }, data: { MODE: 'fast' } });
  server.seed(SECRETS, { metadata: { name: 'pw', namespace: 'ns' }, data: { PASSWORD: Buffer.from('s3cret ✓').toString('base64') } });
  const env = apiEnvSources(sourceReader(server.client(), undefined));
  const signal = AbortSignal.timeout(5000);
  assert.deepEqual(await env.configMap('ns', 'cfg', signal), { MODE: 'fast' });
  assert.deepEqual(await env.secret('ns', 'pw', signal), { PASSWORD: 's3cret ✓' });
  assert.equal(await env.configMap('other', 'cfg', signal), undefined);
  assert.equal(await env.secret('ns', 'missing', signal), undefined);
  server.failNext({ method: 'GET', path: /\/secrets\/pw$/ }, { code: 503, reason: 'ServiceUnavailable' });
  await assert.rejects(env.secret('ns', 'pw', signal), (err: unknown) => hasCode(err, 'ERR_UNAVAILABLE'), 'an unreachable API is not "absent"');
});
