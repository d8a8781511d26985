/**
 * The legacy service-account token controller (upstream pkg/controller/serviceaccount
 * TokensController): a Secret of type `kubernetes.io/service-account-token` annotated
 * `kubernetes.io/service-account.name` gets `token` (a legacy token signed by the API server's
 * service-account key, the one signer of every service-account token), `ca.crt` and `namespace`,
 * and the account's UID as `kubernetes.io/service-account.uid`. A Secret whose account does not
 * exist (or has another UID) is deleted, so deleting an account deletes its token Secrets.
 */
import { SECRETS, SERVICEACCOUNTS, type Secret, type ServiceAccount } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf } from '../util/pods.js';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const ANN_SERVICE_ACCOUNT_NAME = 'kubernetes.io/service-account.name';
export const ANN_SERVICE_ACCOUNT_UID = 'kubernetes.io/service-account.uid';

/** Signs the legacy token of `secretName` for `sa` (the API server's ServiceAccountTokens.issueLegacy). */
export type LegacyTokenSigner = (o: { sa: ServiceAccount; secretName: string }) => Promise<string>;

const isTokenSecret = (s: Secret): boolean => s.type === SERVICE_ACCOUNT_TOKEN_TYPE;
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export class TokensController extends ControllerBase {
  readonly #secrets;
  readonly #accounts;

  constructor(d: ControllerDeps) {
    super(d, { name: 'serviceaccount-token' });
    // Keys: `secret:<ns>/<name>` for a token Secret, `sa:<ns>/<name>` for an account whose Secrets to revisit.
    this.#secrets = this.watch(SECRETS, (s) => (isTokenSecret(s) ? `secret:${keyOf(s)}` : undefined), ['add', 'update']);
    this.#accounts = this.watch(SERVICEACCOUNTS, (sa) => `sa:${keyOf(sa)}`);
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const [kind, rest] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if (kind === 'sa') {
      const [ns, name] = rest.split('/');
      for (const s of this.#secrets.list()) {
        if (s.metadata.namespace === ns && isTokenSecret(s) && s.metadata.annotations?.[ANN_SERVICE_ACCOUNT_NAME] === name) this.enqueue(`secret:${keyOf(s)}`);
      }
      return;
    }
    const secret = this.#secrets.get(rest);
    if (!secret || !isTokenSecret(secret) || secret.metadata.deletionTimestamp) return;
    const ns = secret.metadata.namespace!;
    const saName = secret.metadata.annotations?.[ANN_SERVICE_ACCOUNT_NAME] ?? '';
    const wantUid = secret.metadata.annotations?.[ANN_SERVICE_ACCOUNT_UID];
    // On a cache miss the account is read from the server (as upstream's fetchOnCacheMiss): one
    // created just before its Secret may not have reached the informer yet.
    const sa = saName ? (this.#accounts.get(`${ns}/${saName}`) ?? (await this.#fetchAccount(ns, saName, signal))) : undefined;
    const secrets = this.client.resource(SECRETS, ns);
    if (!sa || sa.metadata.deletionTimestamp || (wantUid && wantUid !== sa.metadata.uid)) {
      try {
        await secrets.delete(secret.metadata.name!, { preconditions: { uid: secret.metadata.uid! }, signal });
      } catch (err) {
        if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
      }
      return;
    }
    const data = secret.data ?? {};
    const caPem = this.options.rootCaPem ?? '';
    if (data.token && data['ca.crt'] !== undefined && data.namespace && wantUid) return;
    const signer = this.options.legacyTokenSigner;
    if (!signer) return;
    const token = data.token ? Buffer.from(data.token, 'base64').toString('utf8') : await signer({ sa, secretName: secret.metadata.name! });
    const next: Secret = {
      ...secret,
      metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [ANN_SERVICE_ACCOUNT_UID]: sa.metadata.uid! } },
      data: { ...data, token: b64(token), 'ca.crt': b64(caPem), namespace: b64(ns) },
    };
    try {
      await secrets.update(next, { signal });
    } catch (err) {
      // A newer version of the Secret is queued by its update event; a deleted one needs nothing.
      if (!hasCode(err, 'ERR_NOT_FOUND') && !hasCode(err, 'ERR_CONFLICT')) throw err;
    }
  }

  async #fetchAccount(ns: string, name: string, signal: AbortSignal): Promise<ServiceAccount | undefined> {
    try {
      return await this.client.resource(SERVICEACCOUNTS, ns).get(name, { signal });
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
      throw err;
    }
  }
}
