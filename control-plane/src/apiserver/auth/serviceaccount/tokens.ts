/**
 * Service-account tokens (kube-apiserver pkg/serviceaccount, bound tokens): JWTs signed with the
 * server's key, with upstream's claims —
 *
 *   iss, sub (system:serviceaccount:<ns>:<name>), aud, exp, iat, nbf, jti,
 *   kubernetes.io: { namespace, serviceaccount: {name, uid}, pod?: {name, uid}, secret?, node?: {name, uid}, warnafter? }
 *
 * and their validation: signature, issuer, audience, time, then the bound objects — the
 * service account, and the pod/secret/node a token is bound to, must still exist with the same
 * UID (a pod's token stops working when the pod is deleted).
 *
 * `expirationSeconds: 3607` is what kubelet asks for projected tokens: such a token is extended
 * to a year but carries `warnafter` at 3607 s (upstream's --service-account-extend-token-expiration),
 * so old clients that never reload keep working while the agent still refreshes hourly.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { ServerContext } from '../../context.js';
import type { ApiObject } from '../../object.js';
import { serviceAccountGroups, type UserInfo } from '../types.js';
import type { ServiceAccountKey } from './signing-key.js';

export const EXTENDED_EXPIRATION_SECONDS = 3607;
/** The issuer of legacy Secret-based service-account tokens (upstream LegacyIssuer). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const LEGACY_PREFIX = 'kubernetes.io/serviceaccount/';
const EXTENDED_LIFETIME_SECONDS = 365 * 24 * 3600;

export interface BoundRef {
  kind: 'Pod' | 'Secret' | 'Node';
  name: string;
  uid: string;
}

export interface ServiceAccountTokenOptions {
  issuer: string;
  /** Audiences the API server accepts (default [issuer]). */
  audiences: string[];
  key: ServiceAccountKey;
  /** Extend 3607-second tokens to a year with `warnafter` (default true, as upstream). */
  extendExpiration?: boolean;
}

interface KubernetesClaims {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  secret?: { name: string; uid: string };
  node?: { name: string; uid: string };
  warnafter?: number;
}

export class ServiceAccountTokens {
  readonly #o: ServiceAccountTokenOptions;
  readonly #getKey: JWTVerifyGetKey;

  constructor(o: ServiceAccountTokenOptions) {
    this.#o = o;
    this.#getKey = async (header) => {
      if (header.kid && header.kid !== o.key.kid) throw new Error('unknown key id');
      return o.key.publicKey;
    };
  }

  get issuer(): string {
    return this.#o.issuer;
  }

  get audiences(): string[] {
    return this.#o.audiences;
  }

  get key(): ServiceAccountKey {
    return this.#o.key;
  }

  /** Signs a token; `nowMs` from the server's clock. Returns the token and the expiry it reports. */
  async issue(o: { sa: ApiObject; audiences: string[]; expirationSeconds: number; bound?: BoundRef; node?: { name: string; uid: string }; nowMs: number }): Promise<{ token: string; expirationTimestamp: number }> {
    const iat = Math.floor(o.nowMs / 1000);
    const extend = (this.#o.extendExpiration ?? true) && o.expirationSeconds === EXTENDED_EXPIRATION_SECONDS;
    const exp = iat + (extend ? EXTENDED_LIFETIME_SECONDS : o.expirationSeconds);
    const k8s: KubernetesClaims = {
      namespace: o.sa.metadata.namespace!,
      serviceaccount: { name: o.sa.metadata.name!, uid: o.sa.metadata.uid! },
      ...(o.bound?.kind === 'Pod' ? { pod: { name: o.bound.name, uid: o.bound.uid } } : {}),
      ...(o.bound?.kind === 'Secret' ? { secret: { name: o.bound.name, uid: o.bound.uid } } : {}),
      ...(o.bound?.kind === 'Node' ? { node: { name: o.bound.name, uid: o.bound.uid } } : o.node ? { node: o.node } : {}),
      ...(extend ? { warnafter: iat + EXTENDED_EXPIRATION_SECONDS } : {}),
    };
    const token = await new SignJWT({ 'kubernetes.io': k8s } as unknown as JWTPayload)
      .setProtectedHeader({ alg: this.#o.key.alg, kid: this.#o.key.kid })
      .setIssuer(this.#o.issuer)
      .setSubject(`system:serviceaccount:${k8s.namespace}:${k8s.serviceaccount.name}`)
      .setAudience(o.audiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.#o.key.privateKey);
    return { token, expirationTimestamp: (iat + o.expirationSeconds) * 1000 };
  }

  /**
   * A legacy token for a Secret of type kubernetes.io/service-account-token (upstream
   * LegacyClaims): issuer `kubernetes/serviceaccount`, no audience, no expiry; valid while the
   * Secret holds it and the account exists. Signed with the same key as bound tokens.
   */
  async issueLegacy(o: { sa: ApiObject; secretName: string }): Promise<string> {
    const ns = o.sa.metadata.namespace!;
    const claims: Record<string, string> = {
      [`${LEGACY_PREFIX}namespace`]: ns,
      [`${LEGACY_PREFIX}secret.name`]: o.secretName,
      [`${LEGACY_PREFIX}service-account.name`]: o.sa.metadata.name!,
      [`${LEGACY_PREFIX}service-account.uid`]: o.sa.metadata.uid!,
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: this.#o.key.alg, kid: this.#o.key.kid })
      .setIssuer(LEGACY_ISSUER)
      .setSubject(`system:serviceaccount:${ns}:${o.sa.metadata.name}`)
      .sign(this.#o.key.privateKey);
  }

  /**
   * The user of a service-account token, or undefined when it is not one of ours or no longer
   * valid (bad signature, other issuer or audience, expired, bound object gone or replaced).
   */
  async authenticate(ctx: ServerContext, token: string): Promise<UserInfo | undefined> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#getKey, {
        issuer: this.#o.issuer,
        audience: this.#o.audiences,
        currentDate: new Date(ctx.now()),
        clockTolerance: 60,
      }));
    } catch {
      return this.#authenticateLegacy(ctx, token);
    }
    const k8s = payload['kubernetes.io'] as KubernetesClaims | undefined;
    if (!k8s?.namespace || !k8s.serviceaccount?.name) return undefined;
    const find = (plural: string, ns: string | undefined, name: string): Promise<ApiObject | undefined> => ctx.resource('', 'v1', plural)!.registry.find(ns, name);
    const alive = (o: ApiObject | undefined, uid: string): boolean => !!o && o.metadata.uid === uid && !o.metadata.deletionTimestamp;
    const sa = await find('serviceaccounts', k8s.namespace, k8s.serviceaccount.name);
    if (!alive(sa, k8s.serviceaccount.uid)) return undefined;
    if (k8s.pod && !alive(await find('pods', k8s.namespace, k8s.pod.name), k8s.pod.uid)) return undefined;
    if (k8s.secret && !alive(await find('secrets', k8s.namespace, k8s.secret.name), k8s.secret.uid)) return undefined;
    // A node claim is checked only when the token is bound to the node itself (upstream: pod-bound tokens carry it for information).
    if (k8s.node && !k8s.pod && !alive(await find('nodes', undefined, k8s.node.name), k8s.node.uid)) return undefined;
    const extra: Record<string, string[]> = {};
    if (k8s.pod) {
      extra['authentication.kubernetes.io/pod-name'] = [k8s.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [k8s.pod.uid];
    }
    if (k8s.node) {
      extra['authentication.kubernetes.io/node-name'] = [k8s.node.name];
      extra['authentication.kubernetes.io/node-uid'] = [k8s.node.uid];
    }
    if (payload.jti) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${payload.jti}`];
    return {
      name: `system:serviceaccount:${k8s.namespace}:${k8s.serviceaccount.name}`,
      uid: k8s.serviceaccount.uid,
      groups: serviceAccountGroups(k8s.namespace),
      ...(Object.keys(extra).length ? { extra } : {}),
    };
  }

  /**
   * A legacy Secret-based token (upstream legacyValidator): our signature and issuer
   * `kubernetes/serviceaccount`; the Secret it names must still exist, not be terminating, and
   * hold this very token; the account must exist with the UID the token names.
   */
  async #authenticateLegacy(ctx: ServerContext, token: string): Promise<UserInfo | undefined> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#getKey, { issuer: LEGACY_ISSUER, currentDate: new Date(ctx.now()) }));
    } catch {
      return undefined;
    }
    const claim = (k: string): string => (typeof payload[`${LEGACY_PREFIX}${k}`] === 'string' ? (payload[`${LEGACY_PREFIX}${k}`] as string) : '');
    const [ns, secretName, saName, saUid] = [claim('namespace'), claim('secret.name'), claim('service-account.name'), claim('service-account.uid')];
    if (!ns || !secretName || !saName || payload.sub !== `system:serviceaccount:${ns}:${saName}`) return undefined;
    const secret = await ctx.resource('', 'v1', 'secrets')!.registry.find(ns, secretName);
    const held = (secret?.data as Record<string, unknown> | undefined)?.token;
    if (!secret || secret.metadata.deletionTimestamp || typeof held !== 'string' || Buffer.from(held, 'base64').toString('utf8') !== token) return undefined;
    const sa = await ctx.resource('', 'v1', 'serviceaccounts')!.registry.find(ns, saName);
    if (!sa || sa.metadata.deletionTimestamp || (saUid && sa.metadata.uid !== saUid)) return undefined;
    return { name: `system:serviceaccount:${ns}:${saName}`, uid: sa.metadata.uid!, groups: serviceAccountGroups(ns) };
  }
}

/**
 * Cheap shape check so only JWTs go to {@link ServiceAccountTokens.authenticate}: three base64url
 * parts whose header is a JSON object (`eyJ` is the encoding of `{"`). Node tokens
 * (`node.<id>.<secret>`) also have three dotted parts, and must not match.
 */
export function looksLikeJwt(token: string): boolean {
  return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
