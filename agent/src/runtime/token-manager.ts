/**
 * Service-account tokens for projected volumes (kubelet's token manager): one TokenRequest per
 * (pod, account, audience, lifetime), bound to the pod, cached and renewed when 80 % of its
 * lifetime has passed or it is older than 24 hours — so a pod's token file is rewritten about
 * every 48 minutes for kubelet's 3607-second request, and never outlives the pod (the API
 * server stops accepting a token whose pod is gone).
 */
import { SERVICEACCOUNTS, type ApiClient, type KubeObject, type Pod } from '@nodelet/api/agent';
import type { Clock } from '@nodelet/base';

const MAX_AGE_MS = 24 * 3600_000;

interface Cached {
  token: string;
  issuedAt: number;
  expiresAt: number;
}

export interface TokenSource {
  /** A token for `pod`'s service account, fresh enough to write now. */
  podToken(pod: Pod, o: { audience?: string; expirationSeconds: number }, signal: AbortSignal): Promise<string>;
  /** Drops the cached tokens of a pod that is gone. */
  forget(podUid: string): void;
}

interface TokenRequestReply extends KubeObject {
  status?: { token?: string; expirationTimestamp?: string };
}

export class TokenManager implements TokenSource {
  readonly #api: ApiClient;
  readonly #clock: Clock;
  readonly #cache = new Map<string, Cached>();

  constructor(o: { api: ApiClient; clock: Clock }) {
    this.#api = o.api;
    this.#clock = o.clock;
  }

  /** kubelet's requiresRefresh: past 80 % of the TTL, or older than a day. */
  static needsRefresh(t: Cached, now: number): boolean {
    const ttl = t.expiresAt - t.issuedAt;
    return now >= t.issuedAt + ttl * 0.8 || now - t.issuedAt > MAX_AGE_MS;
  }

  async podToken(pod: Pod, o: { audience?: string; expirationSeconds: number }, signal: AbortSignal): Promise<string> {
    const sa = pod.spec?.serviceAccountName || 'default';
    const key = `${pod.metadata.uid}|${sa}|${o.audience ?? ''}|${o.expirationSeconds}`;
    const now = this.#clock.now();
    const hit = this.#cache.get(key);
    if (hit && !TokenManager.needsRefresh(hit, now)) return hit.token;
    const body = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: {
        ...(o.audience ? { audiences: [o.audience] } : {}),
        expirationSeconds: o.expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
      },
    } as KubeObject;
    const reply = await this.#api.create<KubeObject, TokenRequestReply>(SERVICEACCOUNTS, body, { namespace: pod.metadata.namespace, name: sa, subresource: 'token', signal });
    const token = reply.status?.token;
    if (!token) throw new Error(`TokenRequest for ${pod.metadata.namespace}/${sa} returned no token`);
    const expiresAt = Date.parse(reply.status?.expirationTimestamp ?? '') || now + o.expirationSeconds * 1000;
    this.#cache.set(key, { token, issuedAt: now, expiresAt });
    return token;
  }

  forget(podUid: string): void {
    for (const k of this.#cache.keys()) if (k.startsWith(`${podUid}|`)) this.#cache.delete(k);
  }
}
