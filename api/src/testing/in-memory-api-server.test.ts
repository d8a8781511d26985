// The API server contract (./contract.ts) on the fake; control-plane/src/apiserver/contract.test.ts
// runs the same suite on the real server.
import { apiServerContract } from './contract.js';
import { InMemoryApiServer } from './in-memory-api-server.js';

apiServerContract('InMemoryApiServer keeps the API server contract', async () => {
  const s = await InMemoryApiServer.start();
  return {
    client: s.client(),
    async raw(method, path, headers, body) {
      const res = await fetch(`${s.url}${path}`, { method, headers, body });
      return { status: res.status, body: await res.text() };
    },
    close: () => s.close(),
  };
});
