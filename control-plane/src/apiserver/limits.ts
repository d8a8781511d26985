/**
 * The API server's bounds on what clients may hold (kube-apiserver's --max-requests-inflight,
 * --max-mutating-requests-inflight and --request-timeout, plus the slow-watcher cut-off and the
 * watch cache's byte bound), and
 * the long-running check that exempts watches, log streams and exec sessions from the first
 * three. docs/apiserver.md ("Limits") describes them for operators.
 */
import { decodePathSegments, DEFAULT_EDGE_LIMITS, queryBool, type EdgeLimits } from '@nodelet/api';
import { ADMIN_GROUP, type UserInfo } from './auth/types.js';
import { StatusError } from './status.js';
import { DEFAULT_WATCH_CACHE_BYTES } from './watch-cache.js';

export interface ApiServerLimits extends EdgeLimits {
  /** Read-only requests (GET/HEAD) served at once; 0 = no limit. */
  maxRequestsInflight: number;
  /** Other requests served at once; 0 = no limit. */
  maxMutatingRequestsInflight: number;
  /**
   * A request that is not long-running and has not finished by then gets 504 Timeout; 0 = none.
   * Also bounds receiving a request body.
   */
  requestTimeoutMs: number;
  /**
   * A watch whose encoded events wait unsent past this many bytes is closed: the client does not
   * read, and the server would otherwise buffer every event for it.
   */
  maxWatchBufferBytes: number;
  /**
   * Stored bytes of recent events one resource's watch cache keeps for replay (besides its
   * 1,000 events); a watch from a resourceVersion evicted before it goes to the store.
   */
  watchCacheBytes: number;
}

export const DEFAULT_API_SERVER_LIMITS: ApiServerLimits = {
  ...DEFAULT_EDGE_LIMITS,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  requestTimeoutMs: 60_000,
  maxWatchBufferBytes: 8 * 1024 * 1024,
  watchCacheBytes: DEFAULT_WATCH_CACHE_BYTES,
};

/** Verbs and subresources kube-apiserver's BasicLongRunningRequestCheck treats as long-running. */
const LONG_RUNNING_PREFIXES = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
const READ_ONLY_METHODS = new Set(['GET', 'HEAD']);

/**
 * True for a resource request that streams for as long as the client wants: a watch (`?watch=`
 * on a collection, or the legacy `/watch/` prefix), a proxy, or a log/exec/attach/portforward
 * subresource. Non-resource requests never are. Parsed from the path alone, before routing.
 */
export function isLongRunning(method: string, url: URL): boolean {
  const segs = decodePathSegments(url.pathname) ?? [];
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) rest = segs.slice(2);
  else if (segs[0] === 'apis' && segs.length >= 3) rest = segs.slice(3);
  else return false;
  if (LONG_RUNNING_PREFIXES.has(rest[0] ?? '')) return true;
  // [namespaces, <ns>, resource, name?, subresource?] or [resource, name?, subresource?]
  const r = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  if (r[2] !== undefined && LONG_RUNNING_SUBRESOURCES.has(r[2])) return true;
  return READ_ONLY_METHODS.has(method) && r[1] === undefined && queryBool(url.searchParams, 'watch');
}

/** A 429 as kube-apiserver's max-in-flight filter answers it (with `Retry-After: 1`). */
export const tooManyRequests = (): StatusError =>
  new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });

/**
 * Counts requests in flight in two pools, read-only and mutating (kube-apiserver's
 * WithMaxInFlightLimit). Synchronous; the caller releases the slot when its request ends.
 */
export class InflightLimiter {
  readonly #limit: { readOnly: number; mutating: number };
  readonly #inUse = { readOnly: 0, mutating: 0 };

  constructor(limits: Pick<ApiServerLimits, 'maxRequestsInflight' | 'maxMutatingRequestsInflight'>) {
    this.#limit = { readOnly: limits.maxRequestsInflight, mutating: limits.maxMutatingRequestsInflight };
  }

  /**
   * Takes a slot for a request by `user`, or throws 429 when its pool is full. `system:masters`
   * is never refused (kube-apiserver: a super-admin always gets an answer); it takes no slot
   * when the pool is full. Returns the idempotent release.
   */
  acquire(method: string, user: UserInfo): () => void {
    const pool = READ_ONLY_METHODS.has(method) ? 'readOnly' : 'mutating';
    const limit = this.#limit[pool];
    if (limit > 0 && this.#inUse[pool] >= limit) {
      if (user.groups.includes(ADMIN_GROUP)) return () => undefined;
      throw tooManyRequests();
    }
    this.#inUse[pool]++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse[pool]--;
    };
  }

  /** Slots in use (tests, metrics). */
  inUse(): { readOnly: number; mutating: number } {
    return { ...this.#inUse };
  }
}
