/**
 * Authentication of node API requests (kubelet server/auth.go; authorization is authz.ts):
 *   1 a client certificate that verifies against `authentication.x509.clientCAFile` (CN user, O groups);
 *   2 a bearer token the API server accepts, checked with a TokenReview (results cached for
 *     `authentication.webhook.cacheTTL`, 2 min);
 *   3 anonymous, only when `authentication.anonymous.enabled`.
 * Anything else is 401. Tokens are never logged.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { ApiClient, KubeObject, ResourceType } from '@nodelet/api/agent';

const TOKEN_REVIEWS: ResourceType = { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenReview', plural: 'tokenreviews', singular: 'tokenreview', namespaced: false };

export interface AuthnOptions {
  api: ApiClient;
  clock: Clock;
  log: Logger;
  anonymous: boolean;
  webhook: boolean;
  cacheTTLMs: number;
  clientCA: boolean;
}

export interface AuthResult {
  ok: boolean;
  user?: string;
  /** The user's groups (certificate O, or what TokenReview answered): the authorizer asks about both. */
  groups?: string[];
  reason?: string;
}

interface TokenReviewResult {
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[]; uid?: string }; error?: string };
}

export class NodeApiAuthenticator {
  readonly #o: AuthnOptions;
  /** TokenReview answers by the token's hash; `ttlResolution: 0` so the injected clock is read on every lookup. */
  readonly #cache: LRUCache<string, AuthResult>;

  constructor(o: AuthnOptions) {
    this.#o = o;
    this.#cache = new LRUCache({ max: 1000, ttl: Math.max(o.cacheTTLMs, 1), ttlResolution: 0, perf: { now: () => o.clock.now() } });
  }

  async authenticate(req: IncomingMessage): Promise<AuthResult> {
    const sock = req.socket as TLSSocket;
    if (this.#o.clientCA && sock.authorized) {
      const subject = sock.getPeerCertificate()?.subject;
      const cn = Array.isArray(subject?.CN) ? subject.CN[0] : subject?.CN;
      const o = subject?.O;
      const groups = (Array.isArray(o) ? o : o ? [o] : []).filter((g) => g !== '');
      if (cn) return { ok: true, user: String(cn), groups: [...groups, 'system:authenticated'] };
    }
    const auth = req.headers.authorization;
    const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
    if (m && this.#o.webhook) return this.#token(m[1]!);
    if (this.#o.anonymous) return { ok: true, user: 'system:anonymous', groups: ['system:unauthenticated'] };
    return { ok: false, reason: m ? 'token authentication is disabled' : 'no credentials: send a bearer token or a client certificate' };
  }

  async #token(token: string): Promise<AuthResult> {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.#cache.get(key);
    if (hit) return hit;
    let result: AuthResult;
    try {
      const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } } as KubeObject;
      const review = (await this.#o.api.create(TOKEN_REVIEWS, body, { signal: AbortSignal.timeout(10_000) })) as TokenReviewResult;
      result = review.status?.authenticated
        ? { ok: true, user: review.status.user?.username, groups: review.status.user?.groups ?? [] }
        : { ok: false, reason: 'token rejected by the API server' };
    } catch (err) {
      this.#o.log.warn({ err: describeError(err) }, 'TokenReview failed');
      return { ok: false, reason: 'token could not be verified with the API server' };
    }
    if (this.#o.cacheTTLMs > 0) this.#cache.set(key, result);
    return result;
  }
}
