/**
 * A real API server (plain HTTP, port 0, SQLite in a temp dir) with a fixed set of bearer
 * tokens for the authorization tests: an admin, two plain users, a node, and whatever bootstrap
 * and node tokens the tests create through the API (looked up from the server's own Secrets, as
 * `nodelet server` does).
 */
import http from 'node:http';
import type { Store } from '../../../storage/types.js';
import type { ApiServer } from '../../server.js';
import { startTestApiServer } from '../../testing/test-server.js';
import { createTokenAuthenticator } from '../authenticator.js';
import type { UserInfo } from '../types.js';
import type { ServiceAccountTokens } from '../serviceaccount/tokens.js';
import type { MetricsSource } from '../../metrics-api.js';

export const USERS = {
  admin: { token: 'tok-admin', user: { name: 'admin', groups: ['system:masters', 'system:authenticated'] } },
  alice: { token: 'tok-alice', user: { name: 'alice', groups: ['devs', 'system:authenticated'] } },
  bob: { token: 'tok-bob', user: { name: 'bob', groups: ['system:authenticated'] } },
  node1: { token: 'tok-node1', user: { name: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] } },
  node2: { token: 'tok-node2', user: { name: 'system:node:node-2', groups: ['system:nodes', 'system:authenticated'] } },
} satisfies Record<string, { token: string; user: UserInfo }>;

/** Stands in for the cluster CA where the server only hands it out (node credentials, kube-root-ca.crt). */
export const TEST_CA_PEM = '-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n';

export type Who = keyof typeof USERS | { token: string };

export interface Reply {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface AuthTestServer {
  server: ApiServer;
  store: Store;
  base: string;
  call(who: Who, method: string, path: string, body?: unknown, headers?: Record<string, string | string[]>): Promise<Reply>;
  close(): Promise<void>;
}

export async function startAuthTestServer(o: { now?: () => number; nodeCredentialTtlMs?: number; serviceAccountTokens?: ServiceAccountTokens; metrics?: MetricsSource } = {}): Promise<AuthTestServer> {
  const ref: { server?: ApiServer } = {};
  const started = await startTestApiServer({
    authenticator: createTokenAuthenticator({
      staticTokens: new Map(Object.values(USERS).map((u) => [u.token, u.user])),
      getSecret: (name) => ref.server!.context.resource('', 'v1', 'secrets')!.registry.find('kube-system', name),
      now: o.now ?? Date.now,
      cacheTtlMs: 0,
    }),
    ...(o.now ? { now: o.now } : {}),
    ...(o.nodeCredentialTtlMs ? { nodeCredentialTtlMs: o.nodeCredentialTtlMs } : {}),
    ...(o.serviceAccountTokens ? { serviceAccountTokens: o.serviceAccountTokens } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
    caPem: TEST_CA_PEM,
  });
  const { server, store, url: base } = started;
  ref.server = server;
  return {
    server,
    store,
    base,
    // node:http rather than fetch: a header given as a list goes out as repeated lines, the way
    // kubectl sends Impersonate-Group (fetch would join them into one "a, b" value).
    call(who, method, path, body, headers = {}) {
      const token = typeof who === 'string' ? USERS[who].token : who.token;
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const h: http.OutgoingHttpHeaders = { Authorization: `Bearer ${token}`, ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers };
      return new Promise<Reply>((resolve, reject) => {
        const req = http.request(base + path, { method, headers: h }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = text;
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: started.close,
  };
}
