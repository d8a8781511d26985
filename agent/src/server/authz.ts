/**
 * Authorization of node API requests (kubelet server/auth.go + the webhook authorizer): every
 * authenticated request is put to the API server as a SubjectAccessReview for the node object,
 *
 *   user, groups       from authentication (authn.ts)
 *   verb               get (GET/HEAD), create (POST), update (PUT), patch (PATCH), delete (DELETE);
 *                      the streaming endpoints (exec, attach, portForward, run) are `create`
 *                      whatever the method, so a WebSocket GET cannot open a shell with `get`
 *   resource           nodes, name = this node
 *   subresource        stats (/stats…), metrics (/metrics…), log (/logs…), spec (/spec),
 *                      checkpoint (/checkpoint…), configz (/configz), proxy (everything else:
 *                      /pods, /exec, /attach, /portForward, /containerLogs, /run, /healthz)
 *
 * and refused with 403 unless allowed. Answers are cached (authorized 5 min, unauthorized 30 s,
 * kubelet's defaults). `mode: AlwaysAllow` turns this off (not the default).
 */
import { createHash } from 'node:crypto';
import { AgentError, describeError, type Clock, type Logger } from '@nodelet/base';
import { decodePathSegments, type ApiClient, type KubeObject, type ResourceType } from '@nodelet/api/agent';
import { LRUCache } from 'lru-cache';

const SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews', singular: 'subjectaccessreview', namespaced: false,
};

const STREAMING = new Set(['exec', 'attach', 'portForward', 'run']);

export interface NodeApiAttributes {
  verb: string;
  subresource: string;
}

/**
 * The attributes kubelet derives from a request (pure; exported for tests). The path is
 * classified as the router reads it, percent-decoded (`decodePathSegments`): `/%65xec/…` is
 * served as exec, so it must be authorized as exec. A path that does not decode is
 * ERR_INVALID_ARGUMENT (400), never a guess.
 */
export function nodeApiAttributes(method: string, pathname: string): NodeApiAttributes {
  const segments = decodePathSegments(pathname);
  if (!segments) throw new AgentError('ERR_INVALID_ARGUMENT', 'malformed percent-encoding in path');
  const first = segments[0] ?? '';
  const methodVerb: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = STREAMING.has(first) ? 'create' : (methodVerb[method.toUpperCase()] ?? method.toLowerCase());
  const sub: Record<string, string> = { stats: 'stats', metrics: 'metrics', logs: 'log', spec: 'spec', checkpoint: 'checkpoint', configz: 'configz' };
  return { verb, subresource: sub[first] ?? 'proxy' };
}

export interface AuthzOptions {
  api: ApiClient;
  nodeName: string;
  clock: Clock;
  log: Logger;
  /** `Webhook` (default) asks the API server; `AlwaysAllow` skips the check. */
  mode: 'Webhook' | 'AlwaysAllow';
  cacheAuthorizedTTLMs: number;
  cacheUnauthorizedTTLMs: number;
}

export interface AuthzDecision {
  allowed: boolean;
  /** kubelet's 403 text when not allowed. */
  message?: string;
}

interface ReviewStatus {
  status?: { allowed?: boolean; reason?: string };
}

export class NodeApiAuthorizer {
  readonly #o: AuthzOptions;
  /** SubjectAccessReview answers by a hash of (user, groups, verb, subresource), each with its own TTL (allowed or not). */
  readonly #cache: LRUCache<string, { allowed: boolean }>;

  constructor(o: AuthzOptions) {
    this.#o = o;
    this.#cache = new LRUCache({ max: 1000, ttlResolution: 0, perf: { now: () => o.clock.now() } });
  }

  async authorize(user: string, groups: readonly string[], method: string, pathname: string): Promise<AuthzDecision> {
    if (this.#o.mode === 'AlwaysAllow') return { allowed: true };
    const a = nodeApiAttributes(method, pathname);
    const forbidden = `Forbidden (user=${user}, verb=${a.verb}, resource=nodes, subresource=${a.subresource})`;
    const key = createHash('sha256').update(JSON.stringify([user, [...groups].sort(), a.verb, a.subresource])).digest('hex');
    const hit = this.#cache.get(key);
    if (hit) return hit.allowed ? { allowed: true } : { allowed: false, message: forbidden };
    let allowed: boolean;
    try {
      const body = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: { user, groups: [...groups], resourceAttributes: { verb: a.verb, resource: 'nodes', subresource: a.subresource, name: this.#o.nodeName } },
      } as KubeObject;
      const review = (await this.#o.api.create(SUBJECT_ACCESS_REVIEWS, body, { signal: AbortSignal.timeout(10_000) })) as ReviewStatus;
      allowed = review.status?.allowed === true;
    } catch (err) {
      // Fail closed: an API server we cannot ask grants nothing.
      this.#o.log.warn({ err: describeError(err) }, 'SubjectAccessReview failed');
      return { allowed: false, message: `${forbidden}: authorization could not be checked with the API server` };
    }
    const ttl = allowed ? this.#o.cacheAuthorizedTTLMs : this.#o.cacheUnauthorizedTTLMs;
    if (ttl > 0) this.#cache.set(key, { allowed }, { ttl });
    return allowed ? { allowed: true } : { allowed: false, message: forbidden };
  }
}
