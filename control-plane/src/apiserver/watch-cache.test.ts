// One store watch per resource however many API watchers there are, and close() ends them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import { createTokenAuthenticator } from './auth/authenticator.js';
import { createApiServer } from './server.js';

const TOKEN = 't';

test('N watchers of a resource share one store watch; server close ends every watch', async (t) => {
  const inner = createTempSqliteStore();
  t.after(() => inner.close());
  const watchedPrefixes: string[] = [];
  const store: Store = { ...inner, watch: (prefix, opts) => (watchedPrefixes.push(prefix), inner.watch(prefix, opts)) };
  const server = await createApiServer({
    store,
    authenticator: createTokenAuthenticator({ staticTokens: new Map([[TOKEN, { name: 'admin', groups: ['system:masters'] }]]), getSecret: async () => undefined, now: Date.now }),
  });
  const { url } = await server.listen({ port: 0, host: '127.0.0.1' });
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const rv = ((await (await fetch(`${url}/api/v1/pods`, { headers })).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const streams = await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/api/v1/pods?watch=true&resourceVersion=${rv}`, { headers })));
  const firstLines = streams.map(async (r) => {
    const reader = r.body!.getReader();
    let text = '';
    while (!text.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    return { reader, line: text.split('\n')[0]! };
  });
  const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
  const created = await fetch(`${url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(pod) });
  assert.equal(created.status, 201);
  const got = await Promise.all(firstLines);
  for (const g of got) assert.equal(JSON.parse(g.line).type, 'ADDED');
  assert.deepEqual(watchedPrefixes.filter((p) => p === '/registry/pods/'), ['/registry/pods/'], 'expected exactly one store watch for pods');
  await server.close();
  for (const g of got) {
    let done = false;
    while (!done) ({ done } = await g.reader.read());
  }
});
