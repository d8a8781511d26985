/**
 * The in-process API server most apiserver tests start: plain HTTP on 127.0.0.1 port 0, a static
 * admin bearer token (plus any extra static tokens a test names), and a SQLite store in a temp dir
 * unless the test brings its own store (several servers on one store, a wrapped store).
 */
import { createTempSqliteStore } from '../../storage/testing/sqlite.js';
import type { Store } from '../../storage/types.js';
import { createTokenAuthenticator } from '../auth/authenticator.js';
import type { UserInfo } from '../auth/types.js';
import { createApiServer, type ApiServer, type ApiServerOptions } from '../server.js';

/** The admin token of every {@link startTestApiServer} server (group `system:masters`). */
export const TEST_ADMIN_TOKEN = 'test-admin-token';

/** One answer of {@link TestApiServer.call}: `json` is the parsed body, or its text when it is not JSON. */
export interface TestReply {
  status: number;
  headers: Headers;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface TestCallOptions {
  /** Content-Type of the body (default application/json); sent only with a body. */
  contentType?: string | undefined;
  /** Extra request headers. */
  headers?: Record<string, string> | undefined;
  /** Bearer token (default the admin token). */
  token?: string | undefined;
}

export interface TestApiServer {
  /** `http://127.0.0.1:<port>` (`https://` with the `tls` option, where call() does not trust the CA). */
  readonly url: string;
  readonly server: ApiServer;
  readonly store: Store;
  /** The admin bearer token. */
  readonly token: string;
  /** One request; a string body is sent as it is, anything else as JSON. */
  call(method: string, path: string, body?: unknown, o?: TestCallOptions): Promise<TestReply>;
  /** Closes the server, and the store when this helper created it. Idempotent. */
  close(): Promise<void>;
}

export interface TestApiServerOptions extends Partial<ApiServerOptions> {
  /** Static tokens besides the admin one. */
  tokens?: ReadonlyMap<string, UserInfo>;
}

/**
 * Starts the server. A store passed in stays open on `close()` (its owner closes it); without
 * one a temp SQLite store is created and removed with the server. Other options go to
 * createApiServer as they are; an `authenticator` there replaces the static-token one.
 */
export async function startTestApiServer(o: TestApiServerOptions = {}): Promise<TestApiServer> {
  const { tokens, store: given, ...rest } = o;
  const store = given ?? createTempSqliteStore();
  const staticTokens = new Map<string, UserInfo>([[TEST_ADMIN_TOKEN, { name: 'admin', groups: ['system:masters'] }], ...(tokens ?? [])]);
  let server: ApiServer | undefined;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      await server?.close();
    } finally {
      if (!given) await store.close();
    }
  };
  try {
    server = await createApiServer({
      authenticator: createTokenAuthenticator({ staticTokens, getSecret: async () => undefined, now: Date.now }),
      ...rest,
      store,
    });
    const url = (await server.listen({ port: 0, host: '127.0.0.1' })).url;
    const call = async (method: string, path: string, body?: unknown, c: TestCallOptions = {}): Promise<TestReply> => {
      const r = await fetch(url + path, {
        method,
        headers: {
          Authorization: `Bearer ${c.token ?? TEST_ADMIN_TOKEN}`,
          ...(body !== undefined ? { 'Content-Type': c.contentType ?? 'application/json' } : {}),
          ...c.headers,
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await r.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON (a table, plain text): the text itself
      }
      return { status: r.status, headers: r.headers, json };
    };
    return { url, server, store, token: TEST_ADMIN_TOKEN, call, close };
  } catch (err) {
    await close();
    throw err;
  }
}
