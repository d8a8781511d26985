/**
 * The console's one way to the API: every call carries the signed-in user's bearer token (kept in
 * sessionStorage by the page, never in a URL), and a refusal becomes an {@link ApiError} holding
 * the server's own message (a Status object's `message`), shown to the user as it came.
 */
import { bearerProtocol } from './exec-channel.js';

/** A call the server refused: its HTTP status and its message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The server's message from a failed response: a Status object's message, else the body text. */
export async function apiErrorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const status = JSON.parse(text) as { message?: unknown };
    if (typeof status.message === 'string' && status.message) return new ApiError(res.status, status.message);
  } catch {
    // Not JSON (a proxy's page, plain text): the text itself is the message.
  }
  return new ApiError(res.status, text.trim() || `${res.status} ${res.statusText}`);
}

/** The API as one user sees it. */
export interface Api {
  /** A raw request to `path` (same origin) with the user's token. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * A watch over HTTP: a response that stays open. The page watches over WebSockets (watch.ts);
   * this only reads why one was refused, and is closed as soon as it answers.
   */
  watch(path: string, signal: AbortSignal): Promise<Response>;
  get(path: string, signal?: AbortSignal): Promise<unknown>;
  /** Sends `body` as JSON (or as `contentType`, e.g. a merge patch) and returns the reply's JSON. */
  send(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, contentType?: string): Promise<unknown>;
  /**
   * A WebSocket to `path` on the page's origin (`wss:` under `https:`). A browser cannot set
   * Authorization on a WebSocket: the token goes as the first subprotocol
   * (`base64url.bearer.authorization.k8s.io.…`, which the API server reads and removes), never in
   * the URL.
   */
  webSocket(path: string, protocols: readonly string[]): WebSocket;
}

/** Opens a WebSocket: the browser's, or (in tests) another client with its interface. */
export type SocketFactory = (url: string, protocols: string[]) => WebSocket;

/** An {@link Api} calling `base` (the page's origin) as the holder of `token`. */
export function createApi(token: string, base = '', fetchFn: typeof fetch = (...a) => fetch(...a), socketFn: SocketFactory = (url, protocols) => new WebSocket(url, protocols)): Api {
  const doFetch = (path: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    headers.set('Accept', 'application/json');
    return fetchFn(`${base}${path}`, { ...init, headers, credentials: 'same-origin', cache: 'no-store' });
  };
  const json = async (res: Response): Promise<unknown> => {
    if (!res.ok) throw await apiErrorOf(res);
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  };
  return {
    fetch: (path, init) => doFetch(path, init),
    watch: (path, signal) => doFetch(path, { signal }),
    get: async (path, signal) => json(await doFetch(path, signal ? { signal } : {})),
    send: async (method, path, body, contentType = 'application/json') =>
      json(await doFetch(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': contentType } }) })),
    webSocket: (path, protocols) => {
      const url = new URL(`${base}${path}`, typeof location === 'undefined' ? undefined : location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      return socketFn(url.href, [bearerProtocol(token), ...protocols]);
    },
  };
}
