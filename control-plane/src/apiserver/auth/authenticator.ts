/**
 * Bearer-token authentication: static tokens (the admin token), bootstrap tokens and node tokens
 * kept as Secrets in kube-system (formats in tokens.ts). No anonymous user: an unknown or missing
 * token is a 401. Successful lookups of Secret-backed tokens are cached for `cacheTtlMs` (so a
 * revoked token stays valid at most that long); bootstrap tokens are looked up every time.
 */
import { LRUCache } from 'lru-cache';
import { BOOTSTRAP_SECRET_TYPE, BOOTSTRAP_TOKEN_RE } from '@nodelet/api';
import type { ApiObject, Json } from '../object.js';
import type { Authenticator, UserInfo } from './types.js';
import { BOOTSTRAPPERS_GROUP, NODES_GROUP, NODE_USER_PREFIX } from './types.js';
import { equalHex, equalStrings, NODE_TOKEN_EXPIRATION_KEY, NODE_TOKEN_RE, NODE_TOKEN_SECRET_TYPE, sha256Hex, unb64 } from './tokens.js';

export interface TokenAuthenticatorOptions {
  /** token → user, e.g. the admin token. */
  staticTokens: ReadonlyMap<string, UserInfo>;
  /** Reads a Secret in kube-system. */
  getSecret(name: string): Promise<ApiObject | undefined>;
  now(): number;
  cacheTtlMs?: number;
}

export function createTokenAuthenticator(opts: TokenAuthenticatorOptions): Authenticator {
  const ttl = opts.cacheTtlMs ?? 10_000;
  // By the token's hash, so the cache holds no credential; each entry lives for the TTL or until its token expires.
  const cache = new LRUCache<string, UserInfo>({ max: 10_000, ttlResolution: 0, perf: { now: () => opts.now() } });
  const staticEntries = [...opts.staticTokens];
  /** Expiry of node tokens seen by the last lookup, so the cache never outlives a credential. */
  const expiries = new WeakMap<UserInfo, number>();

  async function lookup(token: string): Promise<UserInfo | undefined> {
    for (const [t, user] of staticEntries) if (equalStrings(t, token)) return user;
    const boot = BOOTSTRAP_TOKEN_RE.exec(token);
    if (boot) return bootstrapUser(boot[1]!, boot[2]!);
    const node = NODE_TOKEN_RE.exec(token);
    if (node) return nodeUser(node[1]!, node[2]!);
    return undefined;
  }

  async function bootstrapUser(id: string, secretPart: string): Promise<UserInfo | undefined> {
    const secret = await opts.getSecret(`bootstrap-token-${id}`);
    if (!secret || secret.type !== BOOTSTRAP_SECRET_TYPE || secret.metadata.deletionTimestamp) return undefined;
    const data = (secret.data ?? {}) as Json;
    if (unb64(data['token-id']) !== id || !equalStrings(unb64(data['token-secret']), secretPart)) return undefined;
    if (unb64(data['usage-bootstrap-authentication']) !== 'true') return undefined;
    const expiration = unb64(data.expiration);
    if (expiration && Date.parse(expiration) <= opts.now()) return undefined;
    const extra = unb64(data['auth-extra-groups']).split(',').map((g) => g.trim()).filter((g) => g.startsWith('system:bootstrappers:'));
    return { name: `system:bootstrap:${id}`, groups: [BOOTSTRAPPERS_GROUP, ...extra, 'system:authenticated'] };
  }

  async function nodeUser(id: string, secretPart: string): Promise<UserInfo | undefined> {
    const secret = await opts.getSecret(`nodelet-node-token-${id}`);
    if (!secret || secret.type !== NODE_TOKEN_SECRET_TYPE || secret.metadata.deletionTimestamp) return undefined;
    const data = (secret.data ?? {}) as Json;
    if (!equalHex(unb64(data['token-secret-sha256']), sha256Hex(secretPart))) return undefined;
    const nodeName = unb64(data['node-name']);
    if (!nodeName) return undefined;
    const expiration = unb64(data[NODE_TOKEN_EXPIRATION_KEY]);
    if (expiration && !(Date.parse(expiration) > opts.now())) return undefined;
    const user = { name: `${NODE_USER_PREFIX}${nodeName}`, groups: [NODES_GROUP, 'system:authenticated'] };
    if (expiration) expiries.set(user, Date.parse(expiration));
    return user;
  }

  return {
    async authenticate(token) {
      if (!token) return undefined;
      const key = sha256Hex(token);
      const hit = cache.get(key);
      if (hit) return hit;
      const user = await lookup(token);
      // Bootstrap tokens are single-use (consumed by the credential exchange): never cache them,
      // or a used token would keep working for the cache's lifetime.
      const lifetime = Math.min(ttl, ((user && expiries.get(user)) ?? Infinity) - opts.now());
      if (user && !user.groups.includes(BOOTSTRAPPERS_GROUP) && lifetime > 0) cache.set(key, user, { ttl: lifetime });
      else cache.delete(key);
      return user;
    },
  };
}
