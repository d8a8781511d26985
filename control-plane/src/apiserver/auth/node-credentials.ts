/**
 * `POST /apis/nodelet.io/v1/nodecredentials`: a node credential (a bearer token for
 * `system:node:<nodeName>`, group `system:nodes`) in exchange for
 *
 *   a bootstrap token   `nodelet join`: the token is consumed FIRST, by a compare-and-swap delete
 *                       of its Secret, so of two parallel requests exactly one gets a credential
 *                       and a failure after that point leaves the token used (fail closed). The
 *                       name of an existing Node is refused unless the token was made for that
 *                       node (`nodelet token create --node-name <n>`: the admin's approval to
 *                       re-join it); a token made for a node joins only that node.
 *   the node's own credential   rotation (the agent renews before expiry): only for itself; the
 *                       previous credentials stay valid for {@link ROTATION_OVERLAP_MS}, so the
 *                       agent can switch without a failed request.
 *   an admin's          any node; earlier credentials of that node are revoked at once.
 *
 *   request  {"apiVersion":"nodelet.io/v1","kind":"NodeCredentialRequest","spec":{"nodeName":"node-1"}}
 *   response 201 {…, "status":{"token":"node.<id>.<secret>","user":"system:node:node-1","groups":["system:nodes"],
 *                 "expirationTimestamp":"…","certificateAuthorityData":"<base64 PEM>"}}
 */
import { BOOTSTRAP_NODE_NAME_KEY, isDns1123Subdomain, rfc3339 } from '@nodelet/api';
import { describeError } from '@nodelet/base';
import type { RequestScope, ServerContext } from '../context.js';
import { admitCreate } from '../handlers/admit.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest, forbidden, invalid, StatusError, unauthorized } from '../status.js';
import { isAdmin } from './authorizer.js';
import { nodeNameOf } from './node-authorizer.js';
import { NODE_NAME_LABEL, NODE_TOKEN_EXPIRATION_KEY, newNodeToken, unb64, b64 } from './tokens.js';
import type { UserInfo } from './types.js';

export const NODE_CREDENTIALS_PATH = '/apis/nodelet.io/v1/nodecredentials';

/** How long a rotated-out node credential keeps working (the agent switches within seconds). */
export const ROTATION_OVERLAP_MS = 10 * 60_000;
/** Default lifetime of a node credential (kube-controller-manager's --cluster-signing-duration: 1 year). */
export const DEFAULT_NODE_CREDENTIAL_TTL_MS = 365 * 24 * 3600_000;

const BOOTSTRAP_USER = /^system:bootstrap:([a-z0-9]{6})$/;

export async function handleNodeCredentialRequest(s: RequestScope): Promise<void> {
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  if (!isPlainObject(body) || (body.kind !== undefined && body.kind !== 'NodeCredentialRequest')) throw badRequest('expected a nodelet.io/v1 NodeCredentialRequest');
  const nodeName = (body.spec as { nodeName?: unknown } | undefined)?.nodeName;
  if (typeof nodeName !== 'string' || !isDns1123Subdomain(nodeName)) {
    throw invalid('NodeCredentialRequest', 'nodelet.io', String(nodeName ?? ''), [{ reason: 'FieldValueInvalid', field: 'spec.nodeName', message: 'must be a DNS-1123 subdomain' }]);
  }
  sendJson(s.res, 201, await issueNodeCredential(s.ctx, nodeName, s.user));
}

/** Decides whether `requester` may get a credential for `nodeName`, consumes what must be consumed, and issues it. */
export async function issueNodeCredential(ctx: ServerContext, nodeName: string, requester: UserInfo): Promise<Json> {
  const secrets = ctx.resource('', 'v1', 'secrets')!;
  const ownCredentials = (): Promise<ApiObject[]> =>
    secrets.registry.list({ namespace: 'kube-system', filter: (o) => o.metadata.labels?.[NODE_NAME_LABEL] === nodeName && o.type === 'nodelet.io/node-token' }).then((p) => p.items);
  let revoke: 'now' | 'after-overlap';
  const bootstrapId = BOOTSTRAP_USER.exec(requester.name)?.[1];
  if (bootstrapId) {
    await consumeBootstrapToken(ctx, bootstrapId, nodeName);
    revoke = 'now';
  } else if (nodeNameOf(requester)) {
    if (nodeNameOf(requester) !== nodeName) throw forbidden(`nodecredentials.nodelet.io "${nodeName}" is forbidden: node "${nodeNameOf(requester)}" may only renew its own credential`);
    revoke = 'after-overlap';
  } else if (isAdmin(requester)) {
    revoke = 'now';
  } else {
    throw forbidden(`nodecredentials.nodelet.io "${nodeName}" is forbidden: only a bootstrap token, the node itself or an admin may request a node credential`);
  }

  const old = await ownCredentials();
  const expiresAt = ctx.now() + (ctx.nodeCredentialTtlMs ?? DEFAULT_NODE_CREDENTIAL_TTL_MS);
  const { token, secret } = newNodeToken(nodeName, expiresAt);
  const obj = admitCreate(ctx, secrets.def, structuredClone(secret) as never);
  obj.metadata.annotations = { 'nodelet.io/issued-to': requester.name };
  await secrets.registry.create(obj);
  // The new credential exists before the old ones go: a node rotating never holds none.
  for (const o of old) {
    if (revoke === 'now') await secrets.registry.remove(o).catch((err: unknown) => ctx.logger.warn({ node: nodeName, secret: o.metadata.name, err: describeError(err) }, 'Revoking an old node credential failed'));
    else await shortenTo(ctx, o, ctx.now() + ROTATION_OVERLAP_MS);
  }
  ctx.logger.info({ node: nodeName, requester: requester.name, revoked: old.length, mode: revoke }, 'Issued node credential');
  return {
    kind: 'NodeCredentialRequest',
    apiVersion: 'nodelet.io/v1',
    metadata: { name: nodeName },
    spec: { nodeName },
    status: {
      token,
      user: `system:node:${nodeName}`,
      groups: ['system:nodes'],
      expirationTimestamp: rfc3339(expiresAt),
      ...(ctx.caPem ? { certificateAuthorityData: Buffer.from(ctx.caPem).toString('base64') } : {}),
    },
  };
}

/**
 * Checks the token's node-name rule, then deletes its Secret at the revision just read (CAS).
 * A lost race (another request consumed it) is a 401, like any used token.
 */
async function consumeBootstrapToken(ctx: ServerContext, id: string, nodeName: string): Promise<void> {
  const secrets = ctx.resource('', 'v1', 'secrets')!;
  const used = (): StatusError => unauthorized();
  const tokenSecret = await secrets.registry.find('kube-system', `bootstrap-token-${id}`);
  if (!tokenSecret) throw used();
  const boundTo = unb64((tokenSecret.data as Json | undefined)?.[BOOTSTRAP_NODE_NAME_KEY]);
  if (boundTo && boundTo !== nodeName) {
    throw forbidden(`nodecredentials.nodelet.io "${nodeName}" is forbidden: this bootstrap token may only join node "${boundTo}"`);
  }
  if (!boundTo && (await ctx.resource('', 'v1', 'nodes')!.registry.find(undefined, nodeName))) {
    throw new StatusError(409, 'AlreadyExists',
      `node "${nodeName}" already exists: a bootstrap token cannot take over an existing node. To re-join it, an admin creates a token for it (nodelet token create --node-name ${nodeName}) or deletes the Node (kubectl delete node ${nodeName})`,
      { name: nodeName, kind: 'nodes' });
  }
  try {
    await secrets.registry.remove(tokenSecret);
  } catch (err) {
    if (err instanceof StatusError && (err.reason === 'NotFound' || err.reason === 'Conflict')) throw used();
    throw err;
  }
}

async function shortenTo(ctx: ServerContext, credential: ApiObject, until: number): Promise<void> {
  const secrets = ctx.resource('', 'v1', 'secrets')!;
  const current = Date.parse(unb64((credential.data as Json | undefined)?.[NODE_TOKEN_EXPIRATION_KEY]) || '') || Infinity;
  if (current <= until) return;
  await secrets.registry
    .guaranteedUpdate('kube-system', credential.metadata.name!, (o) => {
      o.data = { ...((o.data ?? {}) as Json), [NODE_TOKEN_EXPIRATION_KEY]: b64(rfc3339(until)) };
      return o;
    })
    .catch((err: unknown) => ctx.logger.warn({ secret: credential.metadata.name, err: describeError(err) }, 'Shortening an old node credential failed'));
}
